"""`/v1/notes`: the plugin keeps the index in step with Obsidian (upsert, delete, rename) and
reconciles on layout-ready through the content hashes. Every write goes through the index
writer's queue (`index/updates/writer.py`); what each change does is `index/updates/sync.py`
(including how a posted note and the file on disk agree). The routes only translate HTTP."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query

from vault_rag.api.deps import State, note_path
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import (
    ChangedResult,
    FilesChanged,
    FilesChangedResult,
    NoteHashes,
    NoteResult,
    NotesDelete,
    NotesDeleted,
    NotesRename,
    NotesRenamed,
    NotesUpsert,
    NotesUpserted,
    PathResult,
    RenameResult,
)
from vault_rag.index.updates.sync import NoteOutcome, PathOutcome, PostedNote, PostRefused

router = APIRouter(prefix="/notes", tags=["notes"])
REFUSED_STATUS = {"excluded": 403, "no_file": 404}  # a whole batch refused, nothing stored


@router.put("", response_model=NotesUpserted, summary="Batch upsert of resolved notes")
async def upsert_notes(
    body: NotesUpsert,
    state: State,
    wait: Annotated[
        bool,
        Query(description="Answer only once the posted notes' chunks have vectors"),
    ] = False,
) -> NotesUpserted:
    """Chunk and record each note (BM25-searchable when this returns; dense search once its
    chunks are embedded, at once with `wait=true`). A note whose chunks did not change is
    `unchanged`; vectors are reused by content hash."""
    notes = [
        PostedNote(
            path=note_path(n.path),
            content=n.content,
            embeds=[note_path(e) for e in n.embeds],
            mtime=n.mtime,
        )
        for n in body.notes
    ]
    future = state.writer.submit("upsert notes", lambda w: state.notes.upsert(notes, wait))
    try:
        outcomes: list[NoteOutcome] = await asyncio.wrap_future(future)
    except PostRefused as exc:
        status = REFUSED_STATUS[exc.code]
        raise ApiError(status, exc.code, str(exc), {"paths": exc.paths}) from exc
    results = [NoteResult(**vars(o)) for o in outcomes]
    return NotesUpserted(
        results=results,
        indexed=sum(r.status == "indexed" for r in results),
        unchanged=sum(r.status == "unchanged" for r in results),
        ignored=sum(r.status == "ignored" for r in results),
        stale=sum(r.status == "stale" for r in results),
        embedded=sum(r.embedded for r in results),
        reused=sum(r.reused for r in results),
        pending=state.index.manifest.counts()["pending"],
    )


@router.delete("", response_model=NotesDeleted, summary="Batch delete")
async def delete_notes(body: NotesDelete, state: State) -> NotesDeleted:
    """Drop notes from the index (notes that embed them are re-resolved)."""
    paths = list(dict.fromkeys(note_path(p) for p in body.paths))
    future = state.writer.submit("delete notes", lambda w: state.notes.delete(paths))
    outcomes: list[PathOutcome] = await asyncio.wrap_future(future)
    results = [PathResult(path=o.path, status=o.status) for o in outcomes]  # type: ignore[arg-type]
    return NotesDeleted(results=results, deleted=sum(r.status == "deleted" for r in results))


@router.post("/rename", response_model=NotesRenamed, summary="Batch rename (vectors reused)")
async def rename_notes(body: NotesRename, state: State) -> NotesRenamed:
    """Move notes in the index after Obsidian renamed the files. A folder move re-embeds
    nothing; a new file name changes each chunk's title header, so those chunks get new
    vectors in the background."""
    pairs = [(note_path(r.old_path), note_path(r.new_path)) for r in body.renames]
    future = state.writer.submit("rename notes", lambda w: state.notes.rename(pairs))
    outcomes: list[PathOutcome] = await asyncio.wrap_future(future)
    results = [
        RenameResult(
            old_path=o.path,
            new_path=o.new_path or "",
            status=o.status,  # type: ignore[arg-type]
            embedded=o.embedded,
            reused=o.reused,
        )
        for o in outcomes
    ]
    return NotesRenamed(results=results, renamed=sum(r.status == "renamed" for r in results))


@router.post(
    "/changed", response_model=FilesChangedResult, summary="Files changed: the sidecar reads them"
)
async def files_changed(body: FilesChanged, state: State) -> FilesChangedResult:
    """The plugin never posts a PDF's or a canvas's bytes: it names the files that changed
    (created, modified, deleted) and the sidecar reads them from the vault, as a watcher batch
    (`index/updates/sync.py`, `VaultSync.disk`). Works for notes too."""
    paths = list(dict.fromkeys(note_path(p) for p in body.paths))
    known = state.index.manifest.notes()
    result = await asyncio.wrap_future(state.sync.submit(paths))
    changed, deleted, retry = set(result.changed), set(result.deleted), set(result.retry)
    results = []
    for path in paths:
        if path in changed:
            status = "indexed"
        elif path in deleted:
            status = "deleted"
        elif path in retry:
            status = "retry"
        elif path in known and state.index.manifest.note(path) is not None:
            status = "unchanged"
        else:
            status = "ignored"
        results.append(ChangedResult(path=path, status=status))  # type: ignore[arg-type]
    return FilesChangedResult(
        results=results,
        indexed=sum(r.status == "indexed" for r in results),
        deleted=sum(r.status == "deleted" for r in results),
    )


@router.get("/hashes", response_model=NoteHashes, summary="Content hash per indexed note")
def note_hashes(state: State) -> NoteHashes:
    """What the sidecar holds for each note, to compare with the vault on layout-ready (see
    the `hashes` field for the exact contract). Markdown notes only: the plugin posts notes
    and deletes what it does not find among its Markdown files, while PDFs and canvases are
    the sidecar's own business (read from the vault, `POST /v1/notes/changed`)."""
    hashes = state.index.manifest.content_hashes()
    return NoteHashes(hashes={p: h for p, h in hashes.items() if p.lower().endswith(".md")})
