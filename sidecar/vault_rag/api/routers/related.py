"""`GET /v1/related`: the notes closest to a note, from its stored vectors (no model call)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from vault_rag.api.deps import State, translated
from vault_rag.api.schemas import RelatedHit, RelatedResponse
from vault_rag.services.related import related as related_service

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
    with translated():  # unsafe_path 400, excluded 403, not_found 404, store_unavailable 503
        result = related_service(state, path, k)
    return RelatedResponse(
        path=result.path,
        status=result.status,
        chunks_used=result.chunks_used,
        related=[RelatedHit(**vars(r)) for r in result.related],
    )
