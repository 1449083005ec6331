"""Re-embed the vault with a new embedding model beside the working index, then hand it over.

The new index is built in `<data dir>/embedding-rebuild/` by an indexer of its own (its own
manifest, Chroma, BM25 and writer lock), while the server keeps answering from the old one.
Only a complete build is handed to `swap` (the server's part: stop, move the index files, open
again); a failure (the endpoint down, a bad answer, the disk) removes the staging folder and
leaves the data dir, the kept choice and the working index exactly as they were.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_rag.chunking.pipeline import chunk_options
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.updates.records import Progress
from vault_rag.settings import Settings
from vault_rag.sources.registry import source_registry
from vault_rag.vault.exclusions import Exclusions

log = logging.getLogger(__name__)

STAGING_DIR = "embedding-rebuild"
PREVIOUS_DIR = "embedding-previous"  # the index the last switch replaced (one kept)


@dataclass
class RebuildStatus:
    state: str = "idle"  # idle | embedding | swapping | done | failed
    provider: str | None = None
    model: str | None = None
    model_id: str | None = None
    phase: str | None = None  # the indexer's: chunking, embedding, sections
    done: int = 0
    total: int = 0
    started: float | None = None
    finished: float | None = None
    error: str | None = None
    message: str | None = None

    def eta_seconds(self) -> int | None:
        if self.state != "embedding" or self.phase != "embedding" or not self.done:
            return None
        elapsed = time.monotonic() - (self._phase_started or time.monotonic())
        return round(elapsed / self.done * max(self.total - self.done, 0))

    _phase_started: float | None = field(default=None, repr=False)


class EmbeddingRebuild:
    """One rebuild at a time per server; `status` is read by `/v1/status` from any thread."""

    def __init__(self) -> None:
        self.status = RebuildStatus()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._cancel = threading.Event()

    def cancel(self, timeout: float = 60.0) -> None:
        """Stop a rebuild under way (the server is stopping): it fails, nothing is swapped."""
        self._cancel.set()
        self.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(
        self,
        settings: Settings,
        provider: Any,
        data_dir: Path,
        swap: Callable[[Path], None],
        labels: tuple[str, str | None],
    ) -> bool:
        """Start building with `settings` (the new choice laid over) and `provider` (built
        from them); `swap(staging)` runs once the build is complete. False: one runs already."""
        with self._lock:
            if self.running:
                return False
            self.status = RebuildStatus(
                state="embedding",
                provider=labels[0],
                model=labels[1],
                model_id=provider.model_id,
                started=time.monotonic(),
                message="building the new index beside the current one",
            )
            self._thread = threading.Thread(
                target=self._run,
                args=(settings, provider, data_dir, swap),
                name="embedding-rebuild",
                daemon=True,
            )
            self._thread.start()
            return True

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, settings: Settings, provider: Any, data_dir: Path, swap: Callable) -> None:
        status = self.status
        staging = data_dir / STAGING_DIR
        try:
            build_beside(settings, provider, data_dir, staging, status, self._cancel)
            if self._cancel.is_set():
                raise RuntimeError("the server stopped before the switch")
            status.state, status.message = "swapping", "opening the new index"
            swap(staging)
        except Exception as exc:  # any failure: the working index stays, the staging goes
            log.error("embedding model switch failed: %s", exc)
            shutil.rmtree(staging, ignore_errors=True)
            status.state, status.error = "failed", f"{type(exc).__name__}: {exc}"
            status.message = "the switch failed; the previous index is still in use"
        else:
            status.state, status.message = "done", "the new embedding model is in use"
        status.finished = time.monotonic()


class Cancelled(RuntimeError):
    """The server is stopping."""


def build_beside(
    settings: Settings,
    provider: Any,
    data_dir: Path,
    staging: Path,
    status: RebuildStatus,
    cancel: threading.Event,
) -> None:
    """Index the whole vault with `provider` into `staging` (emptied first)."""
    from vault_rag.index.vault_index import VaultIndex

    shutil.rmtree(staging, ignore_errors=True)
    index = VaultIndex(settings.vault, staging, provider)  # type: ignore[arg-type]
    try:
        indexer = Indexer(
            index,
            # the data dir's excluded folders (the plugin's list lives there, not in staging)
            ignores=Exclusions.load(settings, data_dir).ignores(),
            chunk_options=chunk_options(settings, provider),
            batch_size=settings.embeddings_batch_size,
            sources=source_registry(settings),
            sections=settings.cite_spans,
        )

        def on_phase(phase: str, total: int) -> None:
            status.phase, status.total, status.done = phase, total, 0
            status._phase_started = time.monotonic()

        def on_advance(n: int) -> None:
            status.done += n
            if cancel.is_set():
                raise Cancelled("the server is stopping")

        summary = indexer.run(Progress(on_phase=on_phase, on_advance=on_advance))
        if summary.chunks_pending:
            raise RuntimeError(f"{summary.chunks_pending} units were left without a vector")
    finally:
        index.close()
