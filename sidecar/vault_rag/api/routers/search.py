"""`POST /v1/search`: the hybrid retrieval (dense + BM25, fused), as JSON
(`services/search.py` decides; this route translates)."""

from __future__ import annotations

from fastapi import APIRouter

from vault_rag.api.deps import State, translated
from vault_rag.api.schemas import SearchHit, SearchRequest, SearchResponse
from vault_rag.services import search as search_service

router = APIRouter(tags=["search"])


@router.post("/search", response_model=SearchResponse, summary="Hybrid search of the vault")
def search(body: SearchRequest, state: State) -> SearchResponse:
    # A plain `def`: FastAPI runs it in a worker thread, the model and stores are synchronous.
    with translated():
        outcome = search_service.search(
            state, body.query, k=body.k, folder=body.folder, tag=body.tag
        )
    return SearchResponse(
        results=[SearchHit(**r.to_dict()) for r in outcome.results], took_ms=outcome.took_ms
    )
