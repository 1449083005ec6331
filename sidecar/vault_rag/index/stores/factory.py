"""Open the configured vector store for one vault's index (`vector_store` setting).

`chroma` is embedded Chroma in the data dir under its historical collection name `chunks`
(the data dir is already per vault, and a model change is refused until a rebuild), so indexes
built before this module open as they are. The server backends name their collection per vault,
index and embedding model (`naming.py`), because one server holds many users' indexes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vault_rag.index.stores.naming import collection_name
from vault_rag.index.stores.protocol import VectorStore
from vault_rag.settings import Settings

LITE_FILE = "milvus.db"
EMBEDDED_COLLECTION = "chunks"
EMBEDDED_DIR = "chroma"


@dataclass(frozen=True)
class StoreInfo:
    kind: str  # chroma | chroma-http | milvus
    collection: str
    location: str  # a folder, a URL or a Milvus Lite file (never credentials)

    def describe(self) -> str:
        return f"{self.kind} collection {self.collection!r} at {self.location}"


def store_info(settings: Settings, vault_root: Path, data_dir: Path, model_id: str) -> StoreInfo:
    """Where the configured backend keeps this index, without connecting to it."""
    kind = settings.vector_store
    if kind == "chroma":
        return StoreInfo(kind, EMBEDDED_COLLECTION, str(data_dir / EMBEDDED_DIR))
    name = collection_name(vault_root, model_id, data_dir)
    if kind == "chroma-http":
        return StoreInfo(kind, name, settings.chroma_url)
    from vault_rag.index.stores.milvus import MilvusStore

    return StoreInfo(kind, name, MilvusStore(milvus_uri(settings, data_dir), name).location)


def milvus_uri(settings: Settings, data_dir: Path) -> str:
    """The configured server or cluster, else Milvus Lite in the data dir."""
    return settings.milvus_uri or str(data_dir / LITE_FILE)


def open_vector_store(
    settings: Settings, vault_root: Path, data_dir: Path, model_id: str, *, lazy: bool = False
) -> tuple[VectorStore, StoreInfo]:
    """The configured store (not yet connected: a server that is down fails on first use).
    `lazy`: embedded Chroma too is opened on first use (`ChromaStore.connect`)."""
    info = store_info(settings, vault_root, data_dir, model_id)
    if info.kind == "chroma":
        return embedded_chroma(data_dir, connect=not lazy), info
    if info.kind == "chroma-http":
        from vault_rag.index.stores.chroma_http import ChromaHttpStore

        headers = dict(settings.chroma_headers)
        if settings.chroma_token is not None:
            headers.setdefault(
                "Authorization", f"Bearer {settings.chroma_token.get_secret_value()}"
            )
        return ChromaHttpStore(settings.chroma_url, info.collection, headers), info
    from vault_rag.index.stores.milvus import MilvusStore

    token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
    return MilvusStore(milvus_uri(settings, data_dir), info.collection, token), info


def embedded_chroma(
    data_dir: Path, collection: str = EMBEDDED_COLLECTION, *, connect: bool = True
) -> VectorStore:
    from vault_rag.index.stores.chroma import ChromaStore

    store: VectorStore = ChromaStore(data_dir, collection=collection, connect=connect)
    return store
