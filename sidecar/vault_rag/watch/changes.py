"""Disk changes → jobs on the index writer: the watcher's batches and the start-up reconcile.

This module only schedules; what a batch does to the index is `index.sync.VaultSync.disk`.
A batch larger than `writer.batch_notes` is applied one slice at a time, the rest going back
to the queue in the same place. A file whose size or mtime moves while it is read is still
being written: it is looked at again after `retry_delay`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future

from vault_rag.index.updates.sync import DiskResult, VaultSync
from vault_rag.index.updates.writer import IndexWriter, Priority

log = logging.getLogger(__name__)

MAX_RETRIES = 10  # a file still "being written" after this many looks waits for its next change

__all__ = ["DiskResult", "DiskSync"]


class DiskSync:
    """Queues disk batches on the writer and retries files that were still being written."""

    def __init__(self, sync: VaultSync, retry_delay: float = 1.0) -> None:
        self.sync = sync
        self.writer: IndexWriter = sync.writer
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

    def set_ignores(self, ignores: Iterable[str]) -> Future[tuple[list[str], list[str]]]:
        """Apply a new ignore list (the excluded folders changed) ahead of queued disk work
        (`VaultSync.set_ignores`); the notes it no longer covers are queued as a disk batch.
        Returns (removed, queued) paths."""
        ignores = tuple(ignores)

        def job(writer: IndexWriter) -> tuple[list[str], list[str]]:
            removed, queued = self.sync.set_ignores(ignores)
            if queued:
                self.submit(queued)
            return removed, queued

        return self.writer.submit("exclude", job, Priority.USER)

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
        todo = self.sync.expand(paths, dirs)
        now, rest = todo[: self.writer.batch_notes], todo[self.writer.batch_notes :]
        if rest:  # keep the place in the queue: later batches must not overtake it
            self._submit(rest, [], force, seq)
        result = self.sync.disk(now, force)
        for rel in now:
            if rel not in result.retry:
                self._retries.pop(rel, None)
        if result.retry:
            self._retry_later(result.retry)
        return result

    def _reconcile(self, writer: IndexWriter) -> None:
        """The start-up scan, its changes queued as disk batches so posted notes can run
        between them, then a job that records the run once they are done."""
        started = time.monotonic()
        start = self.sync.start_up_scan()
        paths = sorted(set(start.scan.changed) | set(start.scan.deleted))
        if paths:
            self.submit(paths, force=start.force)
        writer.submit(
            "reconcile (finish)",
            lambda w: self.sync.finish_start_up(start, started),
            Priority.DISK,
        )
