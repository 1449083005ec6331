"""Disk changes → index writes: the watcher's batches and the start-up reconcile.

Jobs for `index/writer.py`. A disk batch is only a set of paths: what happened to each is read
from the disk when the job runs, never from a stat taken when it was queued, so jobs may be
reordered by priority without losing a change and a note the plugin already posted (same stat
as recorded) is skipped. A batch larger than `writer.batch_notes` is applied one slice at a
time, the rest going back to the queue in the same place. A file whose size or mtime moves
while it is read is still being written: it is looked at again after `retry_delay`.

Notes that embed a changed note are re-resolved in the same job, and marked stale in the
manifest first, so a process killed in between leaves them for the next scan instead of out
of date with a matching stat.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from vault_rag.index.indexer import ScanResult, missing_key
from vault_rag.index.manifest import Manifest, NoteRecord
from vault_rag.index.writer import IndexWriter, Priority
from vault_rag.pipeline import pipeline_signature
from vault_rag.vault.paths import UnsafePathError, resolve_inside

log = logging.getLogger(__name__)

MAX_RETRIES = 10  # a file still "being written" after this many looks waits for its next change


class FileInFlux(OSError):
    """The file changed while it was read."""


@dataclass
class DiskResult:
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    reindexed: int = 0
    retry: list[str] = field(default_factory=list)


class DiskSync:
    """Queues disk batches on the writer and retries files that were still being written."""

    def __init__(self, writer: IndexWriter, retry_delay: float = 1.0) -> None:
        self.writer = writer
        self.retry_delay = retry_delay
        self._retries: dict[str, int] = {}
        self._timers: list[threading.Timer] = []
        self._lock = threading.Lock()

    def submit(
        self, paths: Iterable[str], dirs: Iterable[str] = (), *, force: bool = False
    ) -> Future[DiskResult]:
        """Bring these vault-relative paths (and everything under `dirs`) in line with the disk."""
        return self._submit(sorted(set(paths)), sorted(set(dirs)), force, None)

    def reconcile(self) -> Future[None]:
        """Start-up: the indexer's full scan (new, changed, deleted while the server was down)."""
        return self.writer.submit("reconcile", self._reconcile, Priority.DISK)

    def stop(self) -> None:
        with self._lock:
            for timer in self._timers:
                timer.cancel()

    def _submit(
        self, paths: list[str], dirs: list[str], force: bool, seq: int | None
    ) -> Future[DiskResult]:
        def job(writer: IndexWriter) -> DiskResult:
            return self._apply(paths, dirs, force, seq)

        if seq is None:
            seq = self.writer.next_seq()
        return self.writer.submit("disk batch", job, Priority.DISK, seq=seq)

    def _retry_later(self, paths: list[str]) -> None:
        again = []
        for path in paths:
            self._retries[path] = self._retries.get(path, 0) + 1
            if self._retries[path] <= MAX_RETRIES:
                again.append(path)
            else:
                log.warning("%s kept changing while being read; left for its next change", path)
        if again and not self.writer.stopping:
            timer = threading.Timer(self.retry_delay, lambda: self.submit(again))
            timer.daemon = True
            with self._lock:
                self._timers = [t for t in self._timers if t.is_alive()] + [timer]
            timer.start()

    def _apply(self, paths: list[str], dirs: list[str], force: bool, seq: int | None) -> DiskResult:
        writer = self.writer
        indexer, manifest = writer.indexer, writer.manifest
        root = indexer.index.vault_root
        seen = writer.note_paths()
        present = set(seen)
        known = manifest.notes()
        wanted = set(paths)
        for folder in dirs:  # a folder deleted, moved or created as a whole
            prefix = folder.strip("/") + "/"
            wanted |= {p for p in (*known, *present) if p.startswith(prefix)}
        todo = sorted(wanted)
        now, rest = todo[: writer.batch_notes], todo[writer.batch_notes :]
        if rest:  # keep the place in the queue: later batches must not overtake it
            self._submit(rest, [], force, seq)
        scan, result = ScanResult(seen=seen), DiskResult()
        for rel in now:
            if rel not in present:
                if rel in known:
                    scan.deleted.append(rel)
                continue
            try:
                record, same = stable_record(root, rel, known.get(rel))
            except FileNotFoundError:
                if rel in known:
                    scan.deleted.append(rel)
                continue
            except (OSError, UnsafePathError):
                result.retry.append(rel)  # still being written, or locked by another program
                continue
            self._retries.pop(rel, None)
            if same and not force:
                if record is not known.get(rel):
                    scan.touched.append(record)
            else:
                scan.changed[rel] = record
        by_hash = {r.file_hash: p for p, r in scan.changed.items() if p not in known}
        for old in scan.deleted:
            new = by_hash.get(known[old].file_hash)
            if new:
                scan.renamed[old] = new
        for record in scan.touched:
            manifest.touch_note(record)
        if scan.changed or scan.deleted:
            add_dependents(writer, scan)
            result.reindexed = indexer.apply(scan, writer.progress())
        result.changed, result.deleted = sorted(scan.changed), sorted(scan.deleted)
        result.renamed = dict(scan.renamed)
        writer.status.disk_batches += 1
        if result.retry:
            self._retry_later(result.retry)
        return result

    def _reconcile(self, writer: IndexWriter) -> None:
        """The start-up scan: projections first, then every new, changed and deleted note, queued
        as disk batches so posted notes can run between them."""
        indexer, index = writer.indexer, writer.indexer.index
        started = time.monotonic()
        index.check_model()
        index.claim_model()
        indexer.reconcile()
        signature = pipeline_signature(indexer.chunk_options)
        force = index.manifest.get_meta("pipeline") != signature
        scan = indexer.scan(force=force)
        for record in scan.touched:
            index.manifest.touch_note(record)
        paths = sorted(set(scan.changed) | set(scan.deleted))
        if paths:
            self.submit(paths, force=force)
        line = (
            f"server start-up: notes seen {len(scan.seen)} / changed {len(scan.changed)} / "
            f"deleted {len(scan.deleted) - len(scan.renamed)} / renamed {len(scan.renamed)}"
        )

        def finish(w: IndexWriter) -> None:
            index.manifest.set_meta("pipeline", signature)
            seconds = time.monotonic() - started
            index.manifest.set_meta("last_run", f"{line}; applied in {seconds:.1f} s")
            w.status.reconciled = True

        writer.submit("reconcile (finish)", finish, Priority.DISK)


def stable_record(root: Path, rel: str, known: NoteRecord | None) -> tuple[NoteRecord, bool]:
    """Like `indexer.file_record`, but a file whose stat moves while it is read raises
    `FileInFlux`. Returns (record, same content as `known`)."""
    absolute = resolve_inside(root, rel)
    before = absolute.stat()
    if known and known.mtime_ns == before.st_mtime_ns and known.size == before.st_size:
        return known, True
    data = absolute.read_bytes()
    after = absolute.stat()
    if (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size) or len(
        data
    ) != after.st_size:
        raise FileInFlux(rel)
    digest = hashlib.sha256(data).hexdigest()
    record = NoteRecord(rel, digest, after.st_mtime_ns, after.st_size)
    return record, bool(known and known.file_hash == digest)


def dependents_of(manifest: Manifest, changed: Iterable[str], deleted: Iterable[str]) -> set[str]:
    """Notes whose resolved text includes a changed or deleted note, or waits for a new one."""
    changed, deleted = set(changed), set(deleted)
    found = manifest.dependents(changed | deleted)
    found |= manifest.dependents(missing_key(p) for p in changed)
    return found - changed - deleted


def add_dependents(writer: IndexWriter, scan: ScanResult) -> None:
    """Put the notes that embed this scan's changes into `scan.changed` with their disk
    records, after marking them stale: `Indexer.apply` re-resolves dependents after the notes
    they embed, so a process killed in between would otherwise leave them out of date with an
    unchanged stat (the next scan would skip them)."""
    found = dependents_of(writer.manifest, scan.changed, scan.deleted)
    if not found:
        return
    writer.manifest.mark_stale(found)
    root = writer.indexer.index.vault_root
    for rel in sorted(found):
        try:
            scan.changed[rel] = stable_record(root, rel, None)[0]
        except (OSError, UnsafePathError):
            continue  # gone or being written: stays stale, the next batch or scan takes it
