"""Embedded Chroma (`chromadb.PersistentClient`) as a `VectorStore`.

We talk to chromadb's public API directly rather than through langchain-chroma: we pass our own
vectors (computed once per content hash by our providers, re-used for renames) and upsert them
by chunk id, which langchain-chroma's public API cannot do without embedding the texts itself
(`add_texts` / `update_documents` call its embedding function). The collection is created with
the same arguments langchain-chroma used (`embedding_function=None`, cosine space), so indexes
built before this change open as they are.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from vault_rag.index.stores.base import scalar_metadata

CHROMA_DIR = "chroma"
COLLECTION = "chunks"
_METADATA = {"hnsw:space": "cosine"}
# HNSW's candidate list per query. Chroma's default (100) equals our pool (`retrieval/dense.py`
# asks for 100 units), which is too tight: on the UE-notes index (3,500 units) the store's 100
# held only 88-100 of the exact 100 nearest, and a different 88-100 in every process (the graph
# loaded from disk differs), so one query's results changed from one run to the next. At 400
# they held 99-100, the same in every process.
SEARCH_EF = 400


def with_search_ef(collection: Any) -> Any:
    """`collection` with HNSW's ef_search raised to `SEARCH_EF` (a collection made before this
    setting is updated once, in place; its vectors are untouched)."""
    hnsw = (getattr(collection, "configuration", None) or {}).get("hnsw") or {}
    if int(hnsw.get("ef_search") or 0) < SEARCH_EF:
        collection.modify(configuration={"hnsw": {"ef_search": SEARCH_EF}})
    return collection


class ChromaStore:
    """One Chroma collection in `<data dir>/chroma`. Chroma never embeds anything itself
    (its default embedding function would download a model)."""

    def __init__(
        self, data_dir: Path, collection: str = COLLECTION, *, connect: bool = True
    ) -> None:
        self._path = data_dir / CHROMA_DIR
        self._path.mkdir(parents=True, exist_ok=True)
        self._name = collection
        self._client: Any = None
        self._opened: Any = None
        # Chroma's count costs ~50 ms at 70k vectors and every search asks for it: remembered
        # until this object writes (the one writer process writes through one store object).
        self._count: int | None = None
        self._writes = 0
        if connect:
            self.connect()

    def connect(self) -> None:
        """Open the client and the collection (once). `connect=False` defers it to the first
        use: a `vault-rag index` that finds nothing to do never imports chromadb (~0.6 s)."""
        if self._opened is not None:
            return
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        # Telemetry off: no network at run time except to services the user configured.
        self._client = chromadb.PersistentClient(
            path=str(self._path), settings=ChromaSettings(anonymized_telemetry=False)
        )
        self._opened = self._open()

    def close(self) -> None:
        """Release the client: chromadb keeps one open system per path for the whole process,
        so another index opened on the same path after this one (`vault-rag doctor --repair`
        after moving `chroma/` aside) would write through the old, moved files."""
        close = getattr(self._client, "close", None) if self._opened is not None else None
        self._opened = None
        if close is not None:
            close()

    @property
    def _collection(self) -> Any:
        if self._opened is None:
            self.connect()
        return self._opened

    def fingerprint(self) -> str:
        """The store's files by name and size, read with `stat` only (no chromadb): a cheap
        sign that nobody replaced, emptied or removed them (`VaultIndex.store_in_sync`).
        Chroma rewrites its files on every open, so modification times say nothing."""
        found = []
        for root, _dirs, files in os.walk(self._path):
            for name in files:
                if name.endswith(("-shm", "-journal")):
                    continue
                full = os.path.join(root, name)
                try:
                    size = os.stat(full).st_size
                except OSError:
                    continue
                found.append(f"{os.path.relpath(full, self._path)}:{size}")
        return ";".join(sorted(found))

    def _open(self) -> Any:
        return with_search_ef(
            self._client.get_or_create_collection(
                name=self._name, embedding_function=None, metadata=dict(_METADATA)
            )
        )

    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        if not ids:
            return
        with self._writing():
            self._collection.upsert(
                ids=list(ids),
                embeddings=[list(v) for v in vectors],
                documents=list(texts),
                metadatas=[scalar_metadata(m) for m in metadatas],
            )

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._writing():
                self._collection.delete(ids=list(ids))

    def ids(self) -> set[str]:
        return set(self._collection.get(include=[])["ids"])

    def reset(self) -> None:
        """Drop the collection (and with it the fixed dimension) and start an empty one."""
        from chromadb.errors import NotFoundError

        self.connect()
        with self._writing():
            with contextlib.suppress(NotFoundError):  # already gone
                self._client.delete_collection(self._name)
            self._opened = self._open()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Forget the count before and after a write: a count taken meanwhile is not kept."""
        self._writes += 1
        self._count = None
        try:
            yield
        finally:
            self._writes += 1
            self._count = None

    def count(self) -> int:
        cached = self._count
        if cached is not None:
            return cached
        writes = self._writes
        count = int(self._collection.count())
        if writes == self._writes:  # no write meanwhile: the number still holds
            self._count = count
        return count

    def search(
        self, vector: Sequence[float], k: int, note_paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        where: dict[str, Any] | None = None
        if note_paths is not None:
            if not note_paths:
                return []
            where = {"note_path": {"$in": list(note_paths)}}
        result = self._collection.query(
            query_embeddings=[list(vector)],
            n_results=k,  # (Chroma returns what it holds when that is fewer)
            where=where,
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0] if result["distances"] else [0.0] * len(ids)
        # Chroma's cosine space returns 1 - cosine similarity.
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]
