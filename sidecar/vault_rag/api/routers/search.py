"""`POST /v1/search`: the hybrid retrieval (dense + BM25, fused), as JSON."""

from __future__ import annotations

import time

import anyio
from fastapi import APIRouter

from vault_rag.api.deps import State
from vault_rag.api.schemas import SearchHit, SearchRequest, SearchResponse
from vault_rag.retrieval.hybrid import hybrid_search, search_options

router = APIRouter(tags=["search"])


@router.post("/search", response_model=SearchResponse, summary="Hybrid search of the vault")
async def search(body: SearchRequest, state: State) -> SearchResponse:
    # The model and stores are synchronous: a worker thread, within the search capacity (the
    # searches beyond it wait in line; asks do not wait behind them).
    return await anyio.to_thread.run_sync(_search, body, state, limiter=state.search_capacity)


def _search(body: SearchRequest, state: State) -> SearchResponse:
    options = search_options(
        state.settings,
        prior=state.prior,
        k=body.k,
        folder=body.folder or None,
        tag=body.tag or None,
    )
    started = time.perf_counter()
    results = hybrid_search(state.index, body.query, options)
    took = (time.perf_counter() - started) * 1000
    return SearchResponse(
        results=[SearchHit(**r.to_dict()) for r in results], took_ms=round(took, 1)
    )
