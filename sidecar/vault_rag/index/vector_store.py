"""Vector stores behind one small interface: embedded Chroma by default (Milvus for scale).

Vectors are always computed by our own providers and passed in, so a store never embeds on its
own (Chroma's default embedding function would download a model) and re-keying a renamed note
costs no model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

CHROMA_DIR = "chroma"
COLLECTION = "chunks"


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


class ChromaStore:
    """Embedded Chroma (`PersistentClient`) driven through langchain-chroma."""

    def __init__(self, data_dir: Path, collection: str = COLLECTION) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings
        from langchain_chroma import Chroma

        path = data_dir / CHROMA_DIR
        path.mkdir(parents=True, exist_ok=True)
        # Telemetry off: no network at run time except to services the user configured.
        client = chromadb.PersistentClient(
            path=str(path), settings=ChromaSettings(anonymized_telemetry=False)
        )
        self._vs = Chroma(
            collection_name=collection,
            client=client,
            collection_metadata={"hnsw:space": "cosine"},
        )
        self._collection = self._vs._collection

    @property
    def langchain(self) -> Any:
        """The langchain-chroma vector store, for LangChain retrievers."""
        return self._vs

    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        if not ids:
            return
        self._collection.upsert(
            ids=list(ids),
            embeddings=[list(v) for v in vectors],
            documents=list(texts),
            metadatas=[_scalar_metadata(m) for m in metadatas],
        )

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._collection.delete(ids=list(ids))

    def ids(self) -> set[str]:
        return set(self._collection.get(include=[])["ids"])

    def reset(self) -> None:
        self._vs.reset_collection()
        self._collection = self._vs._collection

    def count(self) -> int:
        return int(self._collection.count())

    def search(
        self, vector: Sequence[float], k: int, note_paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        total = self.count()
        if total == 0 or k <= 0:
            return []
        where: dict[str, Any] | None = None
        if note_paths is not None:
            if not note_paths:
                return []
            where = {"note_path": {"$in": list(note_paths)}}
        result = self._collection.query(
            query_embeddings=[list(vector)],
            n_results=min(k, total),
            where=where,
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0] if result["distances"] else [0.0] * len(ids)
        # Chroma's cosine space returns 1 - cosine similarity.
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]


def _scalar_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """Chroma metadata values must be scalars; lists become comma-joined strings."""
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
