"""`/v1/sources`: add a source beside the vault, or remove one, as `vault-rag sources add` /
`remove` do (the same checks and sentences: `source_indexes/manage.py`). Loopback only, with the
admin token: the remote listener never forwards here (`remote/gateway.py`). A new source is
indexed at once by the server, on a thread of its own (`ServedSources.add`), and followed like
the start-up's sources (its folder watched, a web source re-crawled every
`web_refresh_hours`)."""

from __future__ import annotations

import anyio
from fastapi import APIRouter

from vault_rag.api.deps import State
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import ErrorBody
from vault_rag.api.source_schemas import SourceAdd, SourceAdded, SourceRemoved
from vault_rag.source_indexes.manage import (
    SourceInSettings,
    SourceMissing,
    SourceTaken,
    new_spec,
)
from vault_rag.source_indexes.specs import SourceError

router = APIRouter(prefix="/sources", tags=["settings"])


def _refused(exc: SourceError) -> ApiError:
    if isinstance(exc, SourceTaken):
        return ApiError(409, "source_exists", str(exc))
    if isinstance(exc, SourceInSettings):
        return ApiError(409, "source_in_settings", str(exc))
    if isinstance(exc, SourceMissing):
        return ApiError(404, "no_source", str(exc))
    return ApiError(422, "invalid_source", str(exc))


def _served(state: State):  # type: ignore[no-untyped-def]
    if state.sources is None:
        raise ApiError(503, "unavailable", "the server's sources are not started")
    return state.sources


@router.post(
    "",
    response_model=SourceAdded,
    status_code=201,
    summary="Add a source beside the vault and start indexing it",
    description="422 `invalid_source`: a bad name, kind, path or URL (file:// and other "
    "non-HTTP URLs are refused), as `vault-rag sources add` says it.",
    responses={
        409: {"model": ErrorBody, "description": "The name is taken (`source_exists`)"},
    },
)
async def add_source(body: SourceAdd, state: State) -> SourceAdded:
    sources = _served(state)
    where = body.url if body.kind == "web" else body.path
    if where is None:
        field = "url" if body.kind == "web" else "path"
        raise ApiError(422, "invalid_source", f"a {body.kind} source needs `{field}`")

    def add():  # type: ignore[no-untyped-def]
        spec = new_spec(
            body.name,
            body.kind,
            where,
            body.include,
            body.exclude,
            body.max_pages,
            relative_ok=False,
        )
        sources.add(spec)
        return spec

    try:
        spec = await anyio.to_thread.run_sync(add)
    except SourceError as exc:
        raise _refused(exc) from exc
    fetched = " (fetched only from its URL's origin and folder)" if spec.kind == "web" else ""
    return SourceAdded(
        name=spec.name,
        kind=spec.kind,
        path=spec.location,
        include=spec.include,
        exclude=spec.exclude,
        max_pages=spec.max_pages,
        indexing=True,
        next=f"indexing {spec.name!r} now{fetched}; it is searchable once "
        "GET /v1/collections shows it indexed",
    )


@router.delete(
    "/{name}",
    response_model=SourceRemoved,
    summary="Remove an added source and its index",
    responses={
        404: {"model": ErrorBody, "description": "No source added with that name (`no_source`)"},
        409: {"model": ErrorBody, "description": "In the settings file (`source_in_settings`)"},
    },
)
async def remove_source(name: str, state: State) -> SourceRemoved:
    sources = _served(state)
    try:
        removed = await anyio.to_thread.run_sync(sources.remove, name)
    except SourceError as exc:
        raise _refused(exc) from exc
    return SourceRemoved(name=name, removed_index=removed)
