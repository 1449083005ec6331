"""What every remote backend shares: the "cannot reach it" error and metadata flattening."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class StoreUnavailableError(RuntimeError):
    """The vector store cannot be reached (server down, wrong address, wrong token).

    Indexing keeps the affected chunks pending in the manifest and retries later; search
    falls back to BM25 meanwhile. Other store errors (a bug, a bad vector) are not this.
    """


def scalar_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """Metadata every backend can store: scalars only, lists comma-joined, None dropped (what
    embedded Chroma stores, so filters and inspection read the same everywhere)."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if value is None:
            continue
        if isinstance(value, list | tuple):
            out[key] = ",".join(str(v) for v in value)
        elif isinstance(value, str | int | float | bool):
            out[key] = value
        else:
            out[key] = str(value)
    return out


class Breaker:
    """After a failed connection, fail fast for `retry_after` seconds instead of waiting for
    another timeout on every search while the server is down."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        self._until = 0.0
        self._error: StoreUnavailableError | None = None

    def check(self) -> None:
        if self._error is not None and time.monotonic() < self._until:
            raise StoreUnavailableError(str(self._error))

    def trip(self, error: StoreUnavailableError) -> StoreUnavailableError:
        self._error, self._until = error, time.monotonic() + self.retry_after
        return error

    def reset(self) -> None:
        self._error = None


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Servers cap a request's size: send long lists in parts."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
