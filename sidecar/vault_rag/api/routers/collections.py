"""`GET /v1/collections`: what a search can cover — the vault and each source beside it, with
its kind, counts and skipped files — for the pane's collection picker. Reads the manifests
(`source_indexes/status.py`); no model, no store."""

from __future__ import annotations

import anyio
from fastapi import APIRouter

from vault_rag.api.deps import State
from vault_rag.api.schemas import CollectionList, CollectionState, SkippedFile
from vault_rag.source_indexes.specs import VAULT
from vault_rag.source_indexes.status import sources_status

router = APIRouter(tags=["status"])


@router.get(
    "/collections", response_model=CollectionList, summary="The vault and the sources beside it"
)
async def collections(state: State) -> CollectionList:
    return await anyio.to_thread.run_sync(_collections, state)


def _collections(state: State) -> CollectionList:
    counts = state.index.manifest.counts()
    found = [
        CollectionState(
            name=VAULT,
            kind="vault",
            primary=True,
            path=str(state.index.vault_root),
            indexed=True,
            files=counts["notes"],
            chunks=counts["chunks"],
            embedded=counts["embedded"],
        )
    ]
    problem = None
    for name, info in sources_status(state.settings).items():
        if not name:  # the declarations do not read: no source to pick, and why
            problem = info.get("problem")
            continue
        found.append(
            CollectionState(
                name=name,
                kind=info["kind"],
                primary=False,
                path=info["path"],
                indexed=bool(info.get("indexed")),
                files=info.get("notes", 0),
                chunks=info.get("chunks", 0),
                embedded=info.get("embedded", 0),
                skipped=info.get("ignored", 0),
                skipped_files=[SkippedFile(**f) for f in info.get("ignored_files", [])],
                problem=info.get("problem"),
            )
        )
    sources = state.sources
    return CollectionList(
        collections=found,
        default=state.settings.default_collections,
        scanning=bool(sources is not None and (sources.scanning or sources.adding)),
        problem=problem,
    )
