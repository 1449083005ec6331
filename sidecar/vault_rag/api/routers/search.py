"""`POST /v1/search`: the hybrid retrieval (dense + BM25, fused), as JSON
(`services/search.py` decides; this route translates)."""

from __future__ import annotations

import anyio
from fastapi import APIRouter

from vault_rag.api.deps import State, translated
from vault_rag.api.routing_schemas import SearchRouting
from vault_rag.api.schemas import SearchHit, SearchRequest, SearchResponse
from vault_rag.services import search as search_service

router = APIRouter(tags=["search"])


@router.post("/search", response_model=SearchResponse, summary="Hybrid search of the vault")
async def search(body: SearchRequest, state: State) -> SearchResponse:
    # The model and stores are synchronous: a worker thread, within the search capacity (the
    # searches beyond it wait in line; asks do not wait behind them).
    return await anyio.to_thread.run_sync(_search, body, state, limiter=state.search_capacity)


def _search(body: SearchRequest, state: State) -> SearchResponse:
    with translated():
        outcome = search_service.search(
            state,
            body.query,
            k=body.k,
            folder=body.folder,
            tag=body.tag,
            collections=body.collections,
        )
    routing = outcome.routing
    return SearchResponse(
        results=[SearchHit(**r.to_dict()) for r in outcome.results],
        took_ms=outcome.took_ms,
        routing=SearchRouting.model_validate(routing.to_dict()) if routing else None,
    )
