"""The single writer: one thread owns every write to the index while the server runs.

Jobs run on that thread one at a time, in priority order:

0. user jobs from the API (`PUT/DELETE /v1/notes`, renames): the plugin is waiting for them;
1. disk batches (the watcher, the start-up reconcile), in arrival order. A large batch is cut
   into slices of `batch_notes`; the rest goes back to the queue keeping its place, so a posted
   note never waits behind more than one slice;
2. embedding pending chunks, one model batch at a time, whenever nothing else is queued.

Readers (search, ask, status) take no lock: the manifest is SQLite in WAL mode, Chroma and the
BM25 snapshots are safe to read while one thread writes, so a read never waits for a write. A
read may see a note between its delete and its insert (missing for a moment), never a mix of
two indexes. The writer holds the index's `WriterLock` for its whole life, so a CLI
`vault-rag index` started meanwhile fails at once instead of writing alongside.

What every note change does (the note routes, disk batches, the start-up scan) is in
`index/updates/sync.py`; `watch/changes.py` schedules the disk batches. All run as jobs here
(`submit`), so no two writes ever interleave.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from vault_rag.index.manifest import Manifest
from vault_rag.index.snapshot_build import refresh_snapshot
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.updates.records import Progress
from vault_rag.index.updates.sections import backfill as backfill_sections
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.listing import VaultListing

log = logging.getLogger(__name__)

PRUNE_AFTER_S = 30.0  # idle this long before dropping cached vectors no chunk uses (renames
# split over two batches still find their vectors)


class Priority(IntEnum):
    USER = 0
    DISK = 1


@dataclass
class WriterStatus:
    state: str = "starting"  # starting | idle | writing | embedding | backoff | stopped
    job: str | None = None
    phase: str | None = None
    done: int = 0
    total: int = 0
    queued: int = 0
    jobs_done: int = 0
    disk_batches: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    reconciled: bool = False  # the start-up scan has been applied
    last_error: str | None = None
    last_error_at: float | None = None


@dataclass(order=True)
class _Queued:
    priority: int
    seq: int
    name: str = field(compare=False)
    fn: Callable[[IndexWriter], Any] = field(compare=False)
    future: Future[Any] = field(compare=False)


class IndexWriter:
    def __init__(self, indexer: Indexer, *, batch_notes: int = 200) -> None:
        self.indexer = indexer
        self.batch_notes = batch_notes  # notes per disk-batch slice (`watch/changes.py`)
        self.status = WriterStatus()
        self._heap: list[_Queued] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopping = False
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._maybe_pending = True  # chunks may be waiting for vectors
        self._backoff = 0.0
        self._backoff_until = 0.0
        self._last_write = 0.0
        self._dirty = False  # written since the last prune
        self._listing: VaultListing | None = None  # the vault's note paths (writer thread)
        self._note_index: tuple[tuple[int, int], NoteIndex] | None = None
        self._thread = threading.Thread(target=self._run, name="vault-rag-writer", daemon=True)

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def manifest(self) -> Manifest:
        return self.indexer.index.manifest

    # -- life cycle -------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> None:
        """Start the thread; raises `IndexLockedError` when another process writes the index."""
        self._thread.start()
        self._ready.wait(timeout)
        if self._start_error is not None:
            raise self._start_error

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the running job (not the queue: the next start's reconcile catches up)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def submit(
        self,
        name: str,
        fn: Callable[[IndexWriter], Any],
        priority: Priority = Priority.USER,
        *,
        seq: int | None = None,
    ) -> Future[Any]:
        future: Future[Any] = Future()
        with self._cond:
            if self._stopping:
                future.set_exception(RuntimeError("the index writer is stopping"))
                return future
            seq = next(self._seq) if seq is None else seq
            heapq.heappush(self._heap, _Queued(int(priority), seq, name, fn, future))
            self.status.queued = len(self._heap)
            self._cond.notify_all()
        return future

    def backoff_left(self) -> float:
        """Seconds until the model is called again after a failure (0: not backing off)."""
        return max(0.0, self._backoff_until - time.monotonic())

    def next_seq(self) -> int:
        """A place in the queue, for a job that must keep it when resubmitted in parts."""
        return next(self._seq)

    def wait_idle(self, timeout: float) -> bool:
        """True once nothing is queued or running and no chunk waits for a vector (tests, CLI)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                busy = bool(self._heap) or self.status.state not in ("idle", "backoff")
                # (between two embedding steps the state reads idle: the loop has not settled)
                busy = busy or (self._maybe_pending and self.status.state != "backoff")
            if not busy and not self.manifest.counts()["pending"]:
                return True
            time.sleep(0.05)
        return False

    # -- the thread -------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self.indexer.lock.acquire()
        except BaseException as exc:
            self._start_error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            while True:
                item = self._pop()
                if item is not None:
                    self._execute(item)
                    continue
                if self._stopping:
                    break
                if self._embed_step():
                    continue
                self._idle()
        finally:
            self._shutdown()

    def _pop(self) -> _Queued | None:
        with self._cond:
            if self._stopping or not self._heap:
                return None
            item = heapq.heappop(self._heap)
            self.status.queued = len(self._heap)
            return item

    def _execute(self, item: _Queued) -> None:
        if not item.future.set_running_or_notify_cancel():
            return
        self.status.state, self.status.job = "writing", item.name
        try:
            result = item.fn(self)
        except BaseException as exc:
            self._record_error(f"{item.name}: {exc}")
            item.future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        else:
            item.future.set_result(result)
        finally:
            self.status.jobs_done += 1
            self.status.job = self.status.phase = None
            self.status.state = "idle"
            self._maybe_pending, self._dirty = True, True
            self._last_write = time.monotonic()

    def _embed_step(self) -> bool:
        """One model batch of pending chunks. False when there is nothing to do (or backoff)."""
        if not self._maybe_pending or time.monotonic() < self._backoff_until:
            return False
        self.status.state = "embedding"
        try:
            embedded, reused = self.indexer.embed_pending(
                self.progress(), limit=self.indexer.batch_size
            )
        except Exception as exc:  # model server down, bad key...: retry later, keep serving
            self._back_off(f"embedding: {exc}")
            return False
        self._backoff = 0.0
        self.status.state, self.status.phase = "idle", None
        self.status.chunks_embedded += embedded
        self.status.chunks_reused += reused
        if embedded + reused == 0:
            # Nothing waits: the units' sections (new ones, or an older index's), a batch a step.
            self._maybe_pending = self.indexer.sections and self._backfill_sections_step()
            return self._maybe_pending
        return True

    def _back_off(self, error: str) -> None:
        """A failed model step: wait twice as long as last time (1–60 s) before the next."""
        self._backoff = min(60.0, max(1.0, self._backoff * 2))
        self._backoff_until = time.monotonic() + self._backoff
        self.status.state = "backoff"
        self._record_error(error)

    def _backfill_sections_step(self) -> bool:
        self.status.state, self.status.phase = "embedding", "sections"
        try:
            done = backfill_sections(
                self.manifest,
                self.indexer.index.provider,
                self.indexer.batch_size,
                self.progress(),  # (this step's batch: "sections 0/32" → "32/32")
                limit=self.indexer.batch_size,
            )
        except Exception as exc:  # as a failed embedding step: retry after the back-off
            self._back_off(f"embedding sections: {exc}")
            self.status.phase = None
            return True
        self.status.state, self.status.phase = "idle", None
        return done > 0

    def _idle(self) -> None:
        now = time.monotonic()
        if self._dirty and now - self._last_write >= PRUNE_AFTER_S and not self._maybe_pending:
            self.manifest.prune_vectors()
            self.manifest.prune_content_hashes()
            self._persist_lexical()
            self._mark_store()
            self._dirty = False
        waits = [self._backoff_until - now] if self._maybe_pending else []
        if self._dirty:
            waits.append(self._last_write + PRUNE_AFTER_S - now)
        with self._cond:
            if not self._heap and not self._stopping:
                self._cond.wait(max(0.01, min(waits)) if waits else None)

    def _shutdown(self) -> None:
        with self._cond:
            left, self._heap = self._heap, []
            self.status.queued = 0
        for item in left:
            item.future.set_exception(RuntimeError("the index writer stopped"))
        if self._dirty:
            self._persist_lexical()
            self._mark_store()
        # For the next process that only searches (`index/dense/snapshot.py`): on stop, not on
        # every idle (at 10k notes ~130 MB written); nothing to do when current, never raises.
        refresh_snapshot(self.indexer.index)
        self.status.state = "stopped"
        self.indexer.lock.release()

    def _mark_store(self) -> None:
        """Every write went through this thread, so when the store-side reconcile held (no
        store failure since), store and manifest agree: recorded for the next start and
        `vault-rag index`, which then skip reading every id back (`VaultIndex.store_in_sync`)."""
        if not self.indexer.store_synced:
            return
        try:
            self.indexer.index.mark_store_in_sync()
        except Exception as exc:
            log.warning("store agreement not recorded: %s", exc)

    def _persist_lexical(self) -> None:
        """Save the BM25 state for the next process (a cache: a failure only costs time)."""
        try:
            self.indexer.index.lexical.persist()
        except Exception as exc:
            log.warning("lexical snapshot not saved: %s", exc)

    def _record_error(self, message: str) -> None:
        log.warning("index writer: %s", message)
        self.status.last_error, self.status.last_error_at = message, time.time()

    # -- helpers for jobs (writer thread only) ----------------------------------------------
    def progress(self) -> Progress:
        def on_phase(phase: str, total: int) -> None:
            self.status.phase, self.status.done, self.status.total = phase, 0, total

        def on_advance(n: int) -> None:
            self.status.done += n

        return Progress(on_phase=on_phase, on_advance=on_advance)

    def note_paths(self) -> list[str]:
        """Every note on disk now (link resolution needs the whole vault): the writer's
        `VaultListing`, which reads again only the folders that changed since the last call."""
        listing = self._listing
        if listing is None or listing.ignores != tuple(self.indexer.ignores):
            listing = self._listing = VaultListing(
                self.indexer.index.vault_root, self.indexer.ignores, self.indexer.sources.suffixes
            )
        version = listing.version
        paths = listing.paths()
        if listing.version != version:  # (the skipped names are listed with the paths)
            self.indexer.note_skipped(listing.skipped)
        return paths

    def note_index(self, paths: list[str] | None = None) -> NoteIndex:
        """Link resolution over every note now (`paths`: `note_paths()` just taken), built
        again only when the listing changed."""
        if paths is None:
            paths = self.note_paths()
        assert self._listing is not None
        key = (id(self._listing), self._listing.version)
        if self._note_index is None or self._note_index[0] != key:
            self._note_index = (key, NoteIndex(paths))
        return self._note_index[1]

    def embed_now(self, ids: set[str]) -> tuple[int, int]:
        """Give these chunks vectors before returning (a caller that waits for dense search)."""
        embedded = reused = 0
        while pending_among(self.manifest, ids):
            e, r = self.indexer.embed_pending(self.progress(), limit=self.indexer.batch_size)
            embedded, reused = embedded + e, reused + r
            if e + r == 0:
                break
        self.status.chunks_embedded += embedded
        self.status.chunks_reused += reused
        return embedded, reused


def pending_among(manifest: Manifest, ids: Iterable[str]) -> int:
    """How many of these chunk ids still wait for a vector."""
    ids = list(ids)
    count = 0
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        row = manifest.db.execute(
            f"SELECT COUNT(*) FROM chunks WHERE embedded=0 AND id IN ({marks})", part
        ).fetchone()
        count += row[0]
    return count


def vector_needs(manifest: Manifest, note_paths: Iterable[str]) -> tuple[int, int]:
    """(chunks that need the model, chunks whose vector is kept or cached) of these notes."""
    embedded = reused = 0
    for path in note_paths:
        rows = manifest.db.execute(
            "SELECT c.embedded, EXISTS(SELECT 1 FROM vectors v WHERE v.content_hash=c.content_hash)"
            " FROM chunks c WHERE c.note_path=?",
            (path,),
        ).fetchall()
        for done, cached in rows:
            if done or cached:
                reused += 1
            else:
                embedded += 1
    return embedded, reused
