"""Vector stores behind one small interface, chosen by the `vector_store` setting
(`factory.py`): embedded Chroma (`chroma.py`) by default, a Chroma server (`chroma_http.py`)
or Milvus (`milvus.py`). Indexing, search and recovery see only `VectorStore`.

Vectors are always computed by our own providers and passed in, so a store never embeds on its
own (Chroma's default embedding function would download a model) and re-keying a renamed note
costs no model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class VectorStore(Protocol):
    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def ids(self) -> set[str]: ...

    def reset(self) -> None:
        """Drop every vector (and the collection's fixed dimension)."""
        ...

    def count(self) -> int: ...

    def search(
        self, vector: Sequence[float], k: int, note_paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) best first, optionally only within `note_paths`."""
        ...
