"""What the note routes do to the index. Every function here runs on the writer thread.

Posted notes (`PUT /v1/notes`) and the disk — how one save is indexed once
-----------------------------------------------------------------------------
When the user saves a note in Obsidian, two things reach the sidecar: the plugin posts the
note (content already resolved with Obsidian's metadata), and the watcher sees the file change.
Both must not index the same save twice, and the manifest's `NoteRecord` (file hash, mtime,
size) is what decides whether the disk changed. So a posted note is recorded against the file
as it is on disk when the post is applied:

1. The file is read (stat, bytes, stat again: a file that moves meanwhile counts as different)
   and resolved with the sidecar's own resolver. If that gives exactly the posted text and
   frontmatter, the post *is* the disk state: the note is recorded with the disk resolution's
   provenance (embedded headings, exact lines, so the same chunk ids as a disk index) and the
   file's real hash and stat.
2. Otherwise, if the posted `mtime` (ms, Obsidian's `TFile.stat.mtime`) is the file's mtime,
   the plugin read this very file and only the resolution differs (Obsidian knows better): the
   posted text is indexed (one span, the note's own), recorded with the file's hash and stat.
3. Otherwise, if the file is newer than the post (the posted `mtime` is older than the
   file's, or no `mtime` was posted and the file says something else), the post is *stale*:
   the disk wins (the vault is the source of truth). Nothing posted is indexed; the file is
   (re-)indexed if the index does not hold it yet, and the answer is `stale` with
   `current_hash`, the file's sha256 (what `GET /v1/notes/hashes` now reports), so the plugin
   reads the note again.
4. Otherwise the disk holds an older version (a save racing the post), or no file at all: the
   posted text is indexed now, recorded with the placeholder hash ``posted:<content hash>`` so
   the next disk event or start-up scan re-reads the file.

In cases 1 and 2 the watcher's event for the same save finds the stat it expects and skips the
file; when the watcher ran first, the post finds the same chunks and answers `unchanged`. Either
way the model embeds each new chunk text once (vectors are cached by content hash anyway).

`GET /v1/notes/hashes` reports, per note, the sha256 of the posted `content` (the exact UTF-8
string the plugin sent) while the file hash it was recorded with is current, else the sha256 of
the file's bytes. A note without embeds saved as UTF-8 with LF line breaks therefore has the
same hash either way; the plugin posts a note whose hash differs, which costs a re-chunk and no
model call when nothing really changed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from vault_rag.chunking.chunker import chunk_note
from vault_rag.index.indexer import ScanResult, note_dependencies
from vault_rag.index.manifest import NoteRecord
from vault_rag.index.writer import IndexWriter, vector_needs
from vault_rag.vault.embeds import resolve_text
from vault_rag.vault.frontmatter import split_frontmatter
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import UnsafePathError, resolve_inside
from vault_rag.vault.reader import NoteSource, decode_note_bytes, read_note
from vault_rag.vault.types import ResolvedNote, Span
from vault_rag.watch.changes import FileInFlux, add_dependents, dependents_of, stable_record
from vault_rag.watch.watcher import is_note_path

POSTED_PREFIX = "posted:"
STALE = "stale"


@dataclass
class PostedNote:
    path: str  # normalised, vault-relative
    content: str  # frontmatter block (if any) + body with embeds inlined
    embeds: list[str]  # normalised paths of the notes inlined, transitively
    mtime: float | None  # ms since the epoch of the file the plugin read


@dataclass
class NoteOutcome:
    path: str
    status: str  # indexed | unchanged | ignored | stale
    source: str | None = None  # disk | posted: whose resolution was indexed
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    current_hash: str | None = None  # stale: the hash the index holds (the file's)


@dataclass
class PathOutcome:
    path: str
    status: str  # deleted | not_found | renamed | indexed | unchanged | missing
    new_path: str | None = None
    embedded: int = 0
    reused: int = 0


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


# -- PUT /v1/notes -----------------------------------------------------------------------------
def upsert_notes(writer: IndexWriter, notes: list[PostedNote], wait: bool) -> list[NoteOutcome]:
    indexer, manifest = writer.indexer, writer.manifest
    root = indexer.index.vault_root
    note_index = NoteIndex(set(writer.note_paths()) | {n.path for n in notes})
    outcomes: list[NoteOutcome] = []
    changed: list[str] = []
    posted_paths = {n.path for n in notes}
    for note in notes:
        if not is_note_path(note.path, indexer.ignores):
            outcomes.append(NoteOutcome(note.path, "ignored"))
            continue
        record, resolved, source = resolve_posted(root, note, note_index)
        stale = source == STALE
        if stale:
            source = "disk"
        chunks = chunk_note(resolved, indexer.chunk_options)
        deps, _ = note_dependencies(resolved, note_index)
        before = manifest.note(note.path)
        same = (
            before is not None
            and [(c.id, c.content_hash) for c in manifest.note_chunks(note.path)]
            == [(c.id, c.content_hash) for c in chunks]
            and manifest.note_deps(note.path) == set(deps)
        )
        if same:
            if before != record:
                manifest.update_note_record(record)
        else:
            manifest.mark_stale(dependents_of(manifest, [note.path], []) - posted_paths)
            indexer.record_note(resolved, chunks, record, note_index, priority=1)
            changed.append(note.path)
        if stale:  # the file's own hash: the plugin sees its copy differs and re-reads
            manifest.set_content_hash(note.path, record.file_hash, record.file_hash)
            outcomes.append(
                NoteOutcome(note.path, STALE, source, len(chunks), current_hash=record.file_hash)
            )
            continue
        manifest.set_content_hash(note.path, content_hash(note.content), record.file_hash)
        status = "unchanged" if same else "indexed"
        outcomes.append(NoteOutcome(note.path, status, source, chunks=len(chunks)))
    if changed:
        reindex_dependents(writer, changed, note_index, skip=posted_paths)
    for outcome in outcomes:
        if outcome.status != "ignored":
            outcome.embedded, outcome.reused = vector_needs(manifest, [outcome.path])
    if wait:
        ids = set().union(*(manifest.chunk_ids(o.path) for o in outcomes)) if outcomes else set()
        writer.embed_now(ids)
    return outcomes


def resolve_posted(
    root: Path, note: PostedNote, note_index: NoteIndex
) -> tuple[NoteRecord, ResolvedNote, str]:
    """(record, resolved note, "disk" | "posted" | "stale") for a posted note; see the module
    doc. For "stale" the record and resolution are the file's."""
    text = note.content.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    frontmatter, body, start, warnings = split_frontmatter(text, note.path)
    posted = ResolvedNote(
        path=note.path,
        text=body,
        frontmatter=frontmatter,
        body_start_line=start,
        spans=[Span(0, len(body), note.path, start, start)] if body else [],
        dependencies=sorted(set(note.embeds) - {note.path}),
        warnings=warnings,
    )
    placeholder = NoteRecord(note.path, POSTED_PREFIX + content_hash(note.content), -1, -1)
    try:
        record, source = read_stable(root, note.path)
    except (OSError, UnsafePathError):
        return placeholder, posted, "posted"
    if not source.skipped:
        disk = resolve_text(note.path, source.text, note_index, lambda p: read_note(root, p))
        disk.warnings[:0] = source.warnings
        if (disk.text, disk.body_start_line, disk.frontmatter) == (body, start, frontmatter):
            return record, disk, "disk"
        if note.mtime is None or note.mtime < record.mtime_ns / 1e6 - 1.0:
            return record, disk, STALE  # the file is newer than the post: the disk wins
    if note.mtime is not None and abs(record.mtime_ns / 1e6 - note.mtime) <= 1.0:
        return record, posted, "posted"
    return placeholder, posted, "posted"


def read_stable(root: Path, rel: str) -> tuple[NoteRecord, NoteSource]:
    """The file's record and decoded text, read once; `FileInFlux` if it moves meanwhile."""
    absolute = resolve_inside(root, rel)
    before = absolute.stat()
    data = absolute.read_bytes()
    after = absolute.stat()
    if (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size):
        raise FileInFlux(rel)
    record = NoteRecord(rel, hashlib.sha256(data).hexdigest(), after.st_mtime_ns, after.st_size)
    return record, decode_note_bytes(rel, data)


def reindex_dependents(
    writer: IndexWriter, changed: list[str], note_index: NoteIndex, skip: set[str]
) -> None:
    """Notes that embed a changed note (or wait for it to exist) are re-resolved from disk.
    They were marked stale before the change was recorded (see `watch.changes`)."""
    root = writer.indexer.index.vault_root
    for rel in sorted(dependents_of(writer.manifest, changed, []) - skip):
        try:
            record, _ = stable_record(root, rel, None)
        except (OSError, UnsafePathError):
            continue  # stays stale: the next disk batch or start-up scan re-reads it
        writer.indexer.index_note(rel, record, note_index, priority=0)


# -- DELETE /v1/notes --------------------------------------------------------------------------
def delete_notes(writer: IndexWriter, paths: list[str]) -> list[PathOutcome]:
    known = writer.manifest.notes()
    gone = sorted({p for p in paths if p in known})
    if gone:
        seen = [p for p in writer.note_paths() if p not in set(gone)]
        scan = ScanResult(seen=seen, deleted=gone)
        add_dependents(writer, scan)
        writer.indexer.apply(scan, writer.progress())
    return [PathOutcome(p, "deleted" if p in known else "not_found") for p in paths]


# -- POST /v1/notes/rename ---------------------------------------------------------------------
def rename_notes(writer: IndexWriter, pairs: list[tuple[str, str]]) -> list[PathOutcome]:
    """Move notes in the index. The file must already be at its new path. Vectors are reused
    by content hash: a folder move embeds nothing; a new file name changes every chunk's title
    header, so those chunks are embedded again (in the background)."""
    manifest = writer.manifest
    root = writer.indexer.index.vault_root
    seen = writer.note_paths()
    present, known = set(seen), manifest.notes()
    scan = ScanResult(seen=seen)
    outcomes: list[PathOutcome] = []
    for old, new in pairs:
        outcome = PathOutcome(old, "missing", new)
        outcomes.append(outcome)
        if new not in present:
            continue  # not on disk (yet): the watcher or the next start-up picks it up
        try:
            record, same = stable_record(root, new, known.get(new))
        except OSError:
            continue
        if not same:
            scan.changed[new] = record
        if old in known and old not in present and old != new:
            scan.deleted.append(old)
            if not same:
                scan.renamed[old] = new
            outcome.status = "renamed"
        else:
            outcome.status = "unchanged" if same else "indexed"
    if scan.changed or scan.deleted:
        add_dependents(writer, scan)
        writer.indexer.apply(scan, writer.progress())
    for outcome in outcomes:
        if outcome.status in ("renamed", "indexed") and outcome.new_path:
            outcome.embedded, outcome.reused = vector_needs(manifest, [outcome.new_path])
    return outcomes
