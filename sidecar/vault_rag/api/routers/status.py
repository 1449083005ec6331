"""`GET /v1/status`: what the index holds, what the writer is doing, per-note state."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from vault_rag.api.deps import ReaderState, served_note_path
from vault_rag.api.routers.embeddings import switch_state
from vault_rag.api.schemas import (
    AskCounts,
    NoteState,
    RerankState,
    Status,
    VectorStoreState,
    WriterState,
)
from vault_rag.index.status import note_state
from vault_rag.retrieval.rerank.factory import reranker_for
from vault_rag.settings import Settings

router = APIRouter(tags=["status"])


@router.get("/status", response_model=Status, summary="Index and server state")
def status(
    request: Request,
    state: ReaderState,  # while a switch drains: the old index, with `embedding_switch`
    path: Annotated[
        str | None,
        Query(max_length=1024, description="Also report this note's index state"),
    ] = None,
) -> Status:
    manifest = state.index.manifest
    counts = manifest.counts()
    rate = float(manifest.get_meta("embed_rate") or 0.0)
    writer = state.writer.status
    note = None
    if path is not None:
        rel = served_note_path(path, state)
        info = note_state(manifest, rel)
        info["content_hash"] = manifest.content_hashes(rel).get(rel)
        note = NoteState(**info)
    llm = state.resources.llm
    return Status(
        vault=str(state.index.vault_root),
        data_dir=str(state.index.data_dir),
        notes=counts["notes"],
        chunks=counts["chunks"],
        embedded=counts["embedded"],
        pending=counts["pending"],
        warnings=counts["warnings"],
        embedding_model=state.index.provider.model_id,
        index_model=state.index.model_id,
        llm_model=state.settings.llm_model if llm is not None else None,
        embed_rate_per_s=round(rate, 2) if rate else None,
        eta_seconds=round(counts["pending"] / rate) if rate and counts["pending"] else None,
        last_run=manifest.get_meta("last_run"),
        last_error=writer.last_error,
        writer=WriterState(
            state=writer.state,
            job=writer.job,
            phase=writer.phase,
            done=writer.done,
            total=writer.total,
            queued=writer.queued,
            reconciled=writer.reconciled,
            disk_batches=writer.disk_batches,
            chunks_embedded=writer.chunks_embedded,
            chunks_reused=writer.chunks_reused,
        ),
        watching=state.watcher is not None,
        asks=AskCounts(**vars(state.asks)),
        note=note,
        vector_store=VectorStoreState(
            kind=state.index.store_info.kind,
            collection=state.index.store_info.collection,
            location=state.index.store_info.location,
            reachable=state.index.store_error is None,
            error=state.index.store_error,
        ),
        rerank=rerank_state(state.settings),
        embedding_switch=switch_state(request.app.state),
    )


def rerank_state(settings: Settings) -> RerankState:
    """The re-ranking stage as every search of this process sees it (`reranker_for`)."""
    reranker = reranker_for(settings)
    if reranker is None:
        return RerankState(kind="none")
    health = reranker.health.to_dict()
    last = health["last"]
    return RerankState(
        kind=settings.rerank,
        label=reranker.label,
        calls=health["calls"],
        fallbacks=health["fallbacks"],
        last_ok=last["applied"] if last else None,
        last_error=health["last_error"],
    )
