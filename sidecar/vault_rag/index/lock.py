"""One writer per index. A second writer fails at once with a clear message instead of
hanging (a second Chroma PersistentClient writing the same folder can hang for minutes)."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

LOCK_FILE = "writer.lock"


class IndexLockedError(RuntimeError):
    """Another process is writing this index."""


class WriterLock:
    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / LOCK_FILE
        self._lock = FileLock(str(self.path), timeout=0)

    def acquire(self) -> WriterLock:
        try:
            self._lock.acquire()
        except Timeout as exc:
            holder = self._holder()
            raise IndexLockedError(
                f"another vault-rag process{holder} is writing the index in {self.path.parent}; "
                "stop it (or wait for it to finish) and try again"
            ) from exc
        # Record who holds it, for the message another writer gets.
        (self.path.parent / "writer.pid").write_text(str(os.getpid()))
        return self

    def release(self) -> None:
        self._lock.release()

    def _holder(self) -> str:
        try:
            return f" (pid {(self.path.parent / 'writer.pid').read_text().strip()})"
        except OSError:
            return ""

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
