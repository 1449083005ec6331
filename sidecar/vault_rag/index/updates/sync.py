"""One way in for note changes while the server runs: posted notes, deletes, renames, disk
batches and the start-up scan. Every method runs on the index writer's thread (as a job,
`IndexWriter.submit`), so no two changes interleave. The HTTP routes only translate requests
into these calls; `watch/changes.py` only batches watcher events and retries files still being
written. All of them share the indexer's core (`Indexer.apply`: dependents marked stale, then
deletes, then changed notes and their dependents re-resolved) and one file reader
(`note_file.read_note_file`).

Posted notes (`PUT /v1/notes`) and the disk — how one save is indexed once
-----------------------------------------------------------------------------
When the user saves a note in Obsidian, two things reach the sidecar: the plugin posts the
note (content already resolved with Obsidian's metadata), and the watcher sees the file change.
Both must not index the same save twice, and the manifest's `NoteRecord` (file hash, mtime,
size) is what decides whether the disk changed. So a posted note is recorded against the file
as it is on disk when the post is applied: `posted_record.record_for_posted`, whose module doc
names the four cases (the post is the disk state; the same file resolved by Obsidian; a stale
post, where the disk wins; a post newer than the disk or without a readable file).

A batch is refused whole, before anything is stored (`refuse_posted`), when a note is in an
excluded folder (`excluded`) or has no file in the vault the scan would index (`no_file`). A
post that inlined an excluded note is indexed from the file (its own resolution, which leaves
that embed as a link).

When the post is recorded with the file's stat (the first two cases), the watcher's event for
the same save finds the stat it expects and skips the file; when the watcher ran first, the post
finds the same chunks and answers `unchanged`. Either way the model embeds each new chunk text
once (vectors are cached by content hash anyway).

`GET /v1/notes/hashes` reports, per note, the sha256 of the posted `content` (the exact UTF-8
string the plugin sent) while the file hash it was recorded with is current, else the sha256 of
the file's bytes. A note without embeds saved as UTF-8 with LF line breaks therefore has the
same hash either way; the plugin posts a note whose hash differs, which costs a re-chunk and no
model call when nothing really changed.

Disk batches
------------
A disk batch is only a set of paths: what happened to each is read from the disk when the job
runs, never from a stat taken when it was queued, so jobs may be reordered by priority without
losing a change, and a note the plugin already posted (same stat as recorded) is skipped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vault_rag.chunking.chunker import chunk_note
from vault_rag.chunking.pipeline import pipeline_signature
from vault_rag.index.manifest import POSTED_PREFIX, Manifest
from vault_rag.index.note_file import FileInFlux, read_note_file
from vault_rag.index.updates.dependencies import dependents_of, note_dependencies
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.updates.post_checks import PostedNote, PostRefused, refuse_posted
from vault_rag.index.updates.posted_record import STALE, content_hash, record_for_posted
from vault_rag.index.updates.records import ScanResult
from vault_rag.index.updates.writer import IndexWriter, vector_needs
from vault_rag.vault.exclusions import is_excluded
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import UnsafePathError
from vault_rag.vault.reader import is_note_path

log = logging.getLogger(__name__)

__all__ = ["POSTED_PREFIX", "FileInFlux", "PostRefused", "PostedNote", "VaultSync"]


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


@dataclass
class DiskResult:
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    reindexed: int = 0
    retry: list[str] = field(default_factory=list)  # still being written: look again later


@dataclass
class StartUpScan:
    scan: ScanResult
    force: bool  # the chunking pipeline (or a kind's own chunker) changed: re-chunk the changed
    signature: str


class VaultSync:
    """Applies note changes to the index. Writer thread only (submit calls as jobs)."""

    def __init__(self, writer: IndexWriter) -> None:
        self.writer = writer

    @property
    def indexer(self) -> Indexer:
        return self.writer.indexer

    @property
    def manifest(self) -> Manifest:
        return self.writer.manifest

    @property
    def root(self) -> Path:
        return self.indexer.index.vault_root

    def apply(self, scan: ScanResult, note_index: NoteIndex | None = None) -> int:
        """The core every disk-side change goes through: stat-only changes recorded, dependents
        marked stale, deletes, then changed notes and their dependents re-resolved from disk.
        Returns how many notes were (re-)indexed. `note_index`: the writer's, when `scan.seen`
        is its listing."""
        for record in scan.touched:
            self.manifest.touch_note(record)
        if not (scan.changed or scan.deleted):
            return 0
        return self.indexer.apply(scan, self.writer.progress(), note_index)

    # -- PUT /v1/notes ---------------------------------------------------------------------
    def upsert(self, notes: list[PostedNote], wait: bool) -> list[NoteOutcome]:
        indexer, manifest = self.indexer, self.manifest
        paths = self.writer.note_paths()
        on_disk = set(paths)
        refuse_posted(notes, indexer.ignores, on_disk)
        posted = {n.path for n in notes}
        # (every posted note has a file, or the batch was refused: usually the writer's index)
        note_index = (
            self.writer.note_index(paths) if posted <= on_disk else NoteIndex(on_disk | posted)
        )
        outcomes: list[NoteOutcome] = []
        changed: list[str] = []
        posted_paths = {n.path for n in notes}
        for note in notes:
            if not is_note_path(note.path, indexer.ignores):
                outcomes.append(NoteOutcome(note.path, "ignored"))
                continue
            # The plugin inlined an excluded note: index the file's own resolution instead,
            # which leaves that embed as a link (excluded notes are not in the note index).
            private = any(is_excluded(e, indexer.ignores) for e in note.embeds)
            record, resolved, source = record_for_posted(self.root, note, note_index, private)
            stale = source == STALE
            if stale:  # the file's own version is what gets (re-)indexed, if anything
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
                # Before the change is recorded: a crash in between leaves them to re-index.
                manifest.mark_stale(dependents_of(manifest, [note.path], []) - posted_paths)
                indexer.record_note(resolved, chunks, record, note_index, priority=1)
                changed.append(note.path)
            if stale:  # the file's own hash: the plugin sees its copy differs and re-reads
                manifest.set_content_hash(note.path, record.file_hash, record.file_hash)
                outcomes.append(
                    NoteOutcome(
                        note.path, STALE, source, len(chunks), current_hash=record.file_hash
                    )
                )
                continue
            manifest.set_content_hash(note.path, content_hash(note.content), record.file_hash)
            status = "unchanged" if same else "indexed"
            outcomes.append(NoteOutcome(note.path, status, source, chunks=len(chunks)))
        if changed:
            indexer.reindex_dependents(changed, note_index, skip=posted_paths)
        for outcome in outcomes:
            if outcome.status != "ignored":
                outcome.embedded, outcome.reused = vector_needs(manifest, [outcome.path])
        if wait:
            ids: set[str] = set()
            for outcome in outcomes:
                ids |= manifest.chunk_ids(outcome.path)
            self.writer.embed_now(ids)
        return outcomes

    # -- DELETE /v1/notes ------------------------------------------------------------------
    def delete(self, paths: list[str]) -> list[PathOutcome]:
        known = self.manifest.notes()
        gone = sorted({p for p in paths if p in known})
        if gone:
            leaving = set(gone)
            seen = [p for p in self.writer.note_paths() if p not in leaving]
            self.apply(ScanResult(seen=seen, deleted=gone))
        return [PathOutcome(p, "deleted" if p in known else "not_found") for p in paths]

    # -- POST /v1/notes/rename -------------------------------------------------------------
    def rename(self, pairs: list[tuple[str, str]]) -> list[PathOutcome]:
        """Move notes in the index. The file must already be at its new path. Vectors are
        reused by content hash: a folder move embeds nothing; a new file name changes every
        chunk's title header, so those chunks are embedded again (in the background)."""
        manifest = self.manifest
        seen = self.writer.note_paths()
        present, known = set(seen), manifest.notes()
        scan = ScanResult(seen=seen)
        outcomes: list[PathOutcome] = []
        for old, new in pairs:
            outcome = PathOutcome(old, "missing", new)
            outcomes.append(outcome)
            if new not in present:
                continue  # not on disk (yet): the watcher or the next start-up picks it up
            try:
                file = read_note_file(self.root, new, known.get(new))
            except OSError:
                continue
            if not file.same:
                scan.changed[new] = file.record
            if old in known and old not in present and old != new:
                scan.deleted.append(old)
                if not file.same:
                    scan.renamed[old] = new
                outcome.status = "renamed"
            else:
                outcome.status = "unchanged" if file.same else "indexed"
        self.apply(scan, self.writer.note_index(seen))
        for outcome in outcomes:
            if outcome.status in ("renamed", "indexed") and outcome.new_path:
                outcome.embedded, outcome.reused = vector_needs(manifest, [outcome.new_path])
        return outcomes

    # -- excluded folders (PUT /v1/settings/exclude) --------------------------------------
    def set_ignores(self, ignores: tuple[str, ...]) -> tuple[list[str], list[str]]:
        """Use a new ignore list (the excluded folders changed): the notes it now covers leave
        the index now (the notes embedding them are re-resolved, so no excluded text stays
        inlined elsewhere). Returns (removed, to index): the notes it no longer covers, which
        the caller queues like new files."""
        self.indexer.ignores = ignores
        known = self.manifest.notes()
        seen = self.writer.note_paths()
        present = set(seen)
        removed = sorted(p for p in known if p not in present)
        self.apply(ScanResult(seen=seen, deleted=removed), self.writer.note_index(seen))
        return removed, [p for p in seen if p not in known]

    # -- disk batches (the watcher) --------------------------------------------------------
    def expand(self, paths: Iterable[str], dirs: Iterable[str]) -> list[str]:
        """The note paths a batch covers: its paths, plus every known or present note under a
        folder deleted, moved or created as a whole."""
        wanted = set(paths)
        folders = [d.strip("/") + "/" for d in dirs]
        if folders:
            candidates = {*self.manifest.notes(), *self.writer.note_paths()}
            wanted |= {p for p in candidates for f in folders if p.startswith(f)}
        return sorted(wanted)

    def disk(self, paths: list[str], force: bool = False) -> DiskResult:
        """Bring these notes in line with the disk (`force`: re-chunk even if unchanged)."""
        seen = self.writer.note_paths()
        present = set(seen)
        # Only these paths' records: the whole manifest's cost ~30 ms a batch at 10k notes.
        known = {rel: record for rel in paths if (record := self.manifest.note(rel))}
        scan, result = ScanResult(seen=seen), DiskResult()
        for rel in paths:
            if rel not in present:
                if rel in known:
                    scan.deleted.append(rel)
                continue
            try:
                file = read_note_file(self.root, rel, known.get(rel), walked=True)
            except FileNotFoundError:
                if rel in known:
                    scan.deleted.append(rel)
                continue
            except (OSError, UnsafePathError):
                result.retry.append(rel)  # still being written, or locked by another program
                continue
            if file.same and not force:
                if file.record is not known.get(rel):
                    scan.touched.append(file.record)
            else:
                scan.changed[rel] = file.record
        scan.detect_renames(known)
        result.reindexed = self.apply(scan, self.writer.note_index(seen))
        result.changed, result.deleted = sorted(scan.changed), sorted(scan.deleted)
        result.renamed = dict(scan.renamed)
        self.writer.status.disk_batches += 1
        return result

    # -- server start-up ------------------------------------------------------------------
    def start_up_scan(self) -> StartUpScan:
        """Projections made to agree with the manifest, then every note stat-ed against it
        (new, changed, deleted while the server was down). The caller queues the changes as
        disk batches, so posted notes can run between them."""
        index = self.indexer.index
        index.check_model()
        index.claim_model()
        self.indexer.reconcile()
        signature = pipeline_signature(self.indexer.chunk_options)
        force = index.manifest.get_meta("pipeline") != signature
        kinds = self.indexer.stale_kinds()
        scan = self.indexer.scan(force=force, paths=self.writer.note_paths(), force_kinds=kinds)
        for record in scan.touched:
            index.manifest.touch_note(record)
        # (the changed paths alone are queued: forcing them re-chunks those of a stale kind)
        return StartUpScan(scan, force or bool(kinds), signature)

    def finish_start_up(self, start: StartUpScan, started: float) -> None:
        scan = start.scan
        line = (
            f"server start-up: notes seen {len(scan.seen)} / changed {len(scan.changed)} / "
            f"deleted {len(scan.deleted) - len(scan.renamed)}{scan.deleted_why()} / "
            f"renamed {len(scan.renamed)}"
        )
        self.manifest.set_meta("pipeline", start.signature)
        self.indexer.record_kind_versions()
        seconds = time.monotonic() - started
        self.manifest.set_meta("last_run", f"{line}; applied in {seconds:.1f} s")
        log.info("%s; applied in %.1f s", line, seconds)
        self.writer.status.reconciled = True
