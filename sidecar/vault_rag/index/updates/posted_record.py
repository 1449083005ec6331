"""How a posted note (`PUT /v1/notes`) and the file on disk agree: the record, resolution and
source a post is indexed with (`sync.VaultSync.upsert` applies it).

The plugin posts a saved note and the watcher sees the same save; the manifest's `NoteRecord`
(file hash, mtime, size) is what decides whether the disk changed, so a posted note is recorded
against the file as it is on disk when the post is applied (`record_for_posted`):

1. The file is read (stat, bytes, stat again: a file that moves meanwhile counts as different)
   and resolved with the sidecar's own resolver. If that gives exactly the posted text and
   frontmatter, the post *is* the disk state: the note is recorded with the disk resolution's
   provenance (embedded headings, exact lines, so the same chunk ids as a disk index) and the
   file's real hash and stat.
2. Otherwise, if the posted `mtime` (ms, Obsidian's `TFile.stat.mtime`) is the file's mtime,
   the plugin read this very file and only the resolution differs (Obsidian knows better): the
   posted text is indexed (one span, the note's own), recorded with the file's hash and stat.
3. Otherwise, if the file is newer than the post (`post_is_stale`: the posted `mtime` is
   older than the file's, or no `mtime` was posted and the file says something else), the post
   is *stale*: the disk wins (the vault is the source of truth). Nothing posted is indexed; the
   file is (re-)indexed if the index does not hold it yet, and the answer is `stale` with
   `current_hash`, the file's sha256 (what `GET /v1/notes/hashes` now reports), so the plugin
   reads the note again.
4. Otherwise the disk holds an older version (`post_differs_from_disk`: a save racing the
   post) or a file that cannot be read (`post_without_file`): the posted text is indexed now,
   recorded with the placeholder hash ``posted:<content hash>`` so the next disk event or
   start-up scan re-reads the file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from vault_rag.index.manifest import POSTED_PREFIX, NoteRecord
from vault_rag.index.note_file import read_note_file
from vault_rag.index.updates.post_checks import PostedNote
from vault_rag.vault.embeds import resolve_text
from vault_rag.vault.frontmatter import split_frontmatter
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import UnsafePathError
from vault_rag.vault.reader import decode_note_bytes, read_note
from vault_rag.vault.types import ResolvedNote, Span

STALE = "stale"


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def record_for_posted(
    root: Path, note: PostedNote, note_index: NoteIndex, disk_only: bool = False
) -> tuple[NoteRecord, ResolvedNote, str]:
    """(record, resolved note, "disk" | "posted" | "stale") for a posted note. For "stale" the
    record and resolution are the file's; `disk_only`: the file's resolution whenever the file
    can be read (the posted text must not be indexed)."""
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
    try:
        file = read_note_file(root, note.path)
    except (OSError, UnsafePathError):
        return post_without_file(note, posted)
    assert file.data is not None  # no `known` record: always read
    source = decode_note_bytes(note.path, file.data)
    if not source.skipped:
        disk = resolve_text(note.path, source.text, note_index, lambda p: read_note(root, p))
        disk.warnings[:0] = source.warnings
        same = (disk.text, disk.body_start_line, disk.frontmatter) == (body, start, frontmatter)
        if same or disk_only:
            return file.record, disk, "disk"
        if post_is_stale(note, file.record):
            return file.record, disk, STALE  # the file is newer than the post: the disk wins
    if note.mtime is not None and abs(file.record.mtime_ns / 1e6 - note.mtime) <= 1.0:
        return file.record, posted, "posted"  # the same file version, resolved by Obsidian
    return post_differs_from_disk(note, posted, file.record)


def placeholder_record(note: PostedNote) -> NoteRecord:
    """A record no file matches, so the next disk event or scan re-reads the file."""
    return NoteRecord(note.path, POSTED_PREFIX + content_hash(note.content), -1, -1)


def post_without_file(
    note: PostedNote, posted: ResolvedNote
) -> tuple[NoteRecord, ResolvedNote, str]:
    """A post whose file cannot be read (a path with no file at all was refused before, see
    `refuse_posted`): indexed as posted, for the disk to settle."""
    return placeholder_record(note), posted, "posted"


def post_is_stale(note: PostedNote, disk: NoteRecord) -> bool:
    """The file on disk, which says something else than the post, is newer than the post:
    the posted `mtime` is older than the file's (beyond the 1 ms both are rounded to), or the
    plugin sent none (nothing shows the post is newer, and the vault is the source of truth)."""
    return note.mtime is None or note.mtime < disk.mtime_ns / 1e6 - 1.0


def post_differs_from_disk(
    note: PostedNote, posted: ResolvedNote, disk: NoteRecord
) -> tuple[NoteRecord, ResolvedNote, str]:
    """The disk holds an older version than the one posted (a save racing the post): indexed
    as posted, recorded so the next disk event or scan re-reads the file."""
    return placeholder_record(note), posted, "posted"
