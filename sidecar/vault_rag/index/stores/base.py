"""What every remote backend shares: the "cannot reach it" error and metadata flattening."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from vault_rag.index.vector_store import _scalar_metadata

T = TypeVar("T")


class StoreUnavailableError(RuntimeError):
    """The vector store cannot be reached (server down, wrong address, wrong token).

    Indexing keeps the affected chunks pending in the manifest and retries later; search
    falls back to BM25 meanwhile. Other store errors (a bug, a bad vector) are not this.
    """


def scalar_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """Metadata every backend can store: scalars only, lists comma-joined (as embedded Chroma)."""
    return _scalar_metadata(meta)


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Servers cap a request's size: send long lists in parts."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
