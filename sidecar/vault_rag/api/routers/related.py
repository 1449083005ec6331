"""`GET /v1/related`: the notes closest to a note, from its stored vectors (no model call)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from vault_rag.api.deps import State, served_note_path
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import RelatedHit, RelatedResponse
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.retrieval.related import NoteNotFoundError, related_notes

router = APIRouter(tags=["related"])


@router.get(
    "/related",
    response_model=RelatedResponse,
    summary="Notes related to a note",
)
def related(
    state: State,
    path: Annotated[str, Query(min_length=1, max_length=1024, description="Vault-relative")],
    k: Annotated[int | None, Query(ge=1, le=100, description="Default: `related_k`")] = None,
) -> RelatedResponse:
    """The notes whose passages are closest to the note's passages, compared with the vectors
    already stored for it (no embedding). Each comes with its best-matching passage and
    whether the note already links to it."""
    rel = served_note_path(path, state)
    settings = state.settings
    try:
        result = related_notes(
            state.index, rel, k or settings.related_k, settings.related_max_query_chunks
        )
    except NoteNotFoundError as exc:
        raise ApiError(404, "not_found", f"no note {rel!r} in the vault", {"path": rel}) from exc
    except StoreUnavailableError as exc:  # related notes need the vectors: no BM25 fallback
        raise ApiError(503, "store_unavailable", str(exc)) from exc
    return RelatedResponse(
        path=result.path,
        status=result.status,
        chunks_used=result.chunks_used,
        related=[RelatedHit(**vars(r)) for r in result.related],
    )
