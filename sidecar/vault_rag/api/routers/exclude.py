"""`/v1/settings/exclude`: the plugin's "Excluded folders", owned and enforced by the sidecar
(`vault/exclusions.py`): its scan, watcher and note routes skip them, and pushing a new list removes
the notes it covers from the index before the answer."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter

from vault_rag.api.deps import State
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import ExcludeState, ExcludeUpdate
from vault_rag.vault.exclusions import ExcludeError, normalize_patterns

router = APIRouter(prefix="/settings", tags=["settings"])


@router.get("/exclude", response_model=ExcludeState, summary="The excluded folders")
def get_exclude(state: State) -> ExcludeState:
    ex = state.exclusions
    return ExcludeState(exclude=ex.pushed, configured=ex.configured)


@router.put("/exclude", response_model=ExcludeState, summary="Set the plugin's excluded folders")
async def put_exclude(body: ExcludeUpdate, state: State) -> ExcludeState:
    """Kept in the data dir and applied at once: notes now excluded leave the index (and the
    notes embedding them are re-resolved without their text) before this answers; notes no
    longer excluded are queued for indexing."""
    try:
        patterns = normalize_patterns(body.exclude)
    except ExcludeError as exc:
        raise ApiError(422, "invalid_exclude", str(exc)) from exc
    ex = state.exclusions
    future = await asyncio.to_thread(ex.push, patterns, state.sync, state.watcher)
    removed, queued = await asyncio.wrap_future(future)
    return ExcludeState(
        exclude=ex.pushed, configured=ex.configured, removed=len(removed), queued=len(queued)
    )
