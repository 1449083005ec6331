"""Chroma in client/server mode: `chromadb.HttpClient` against a `chroma run` server.

Same collection semantics as embedded Chroma (cosine space, our own vectors, scalar metadata),
driven through chromadb's public collection API: langchain-chroma adds nothing when vectors are
computed by our providers and ids, deletes and `where` filters are what we need.

The connection is opened lazily and re-opened after a failure, so a server that is down at
start-up (or restarts) costs a clear `StoreUnavailableError` per call, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from vault_rag.index.stores.base import (
    Breaker,
    StoreUnavailableError,
    batches,
    scalar_metadata,
)
from vault_rag.index.stores.chroma import with_search_ef

T = TypeVar("T")
WRITE_BATCH = 1000  # rows per request (the server's max batch size is far larger)
READ_PAGE = 5000  # ids per page when listing the collection


def parse_chroma_url(url: str) -> tuple[str, int, bool]:
    """(host, port, ssl) of `http(s)://host[:port]`; the port defaults to Chroma's 8000."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"chroma_url must look like http://host:port, not {url!r}")
    ssl = parts.scheme == "https"
    return parts.hostname, parts.port or (443 if ssl else 8000), ssl


class ChromaHttpStore:
    kind = "chroma-http"

    def __init__(
        self,
        url: str,
        collection: str,
        headers: Mapping[str, str] | None = None,
        retry_after: float = 5.0,
    ) -> None:
        self.url = url
        self.collection_name = collection
        self._host, self._port, self._ssl = parse_chroma_url(url)
        self._headers = dict(headers or {})
        self._client: Any = None
        self._collection: Any = None
        self._breaker = Breaker(retry_after)

    @property
    def location(self) -> str:
        return self.url

    # -- connection ---------------------------------------------------------------------------
    def _connect(self) -> Any:
        if self._collection is not None:
            return self._collection
        self._breaker.check()
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        try:
            self._client = chromadb.HttpClient(
                host=self._host,
                port=self._port,
                ssl=self._ssl,
                headers=self._headers or None,
                # Telemetry off: no network at run time except to services the user configured.
                settings=ChromaSettings(anonymized_telemetry=False),
            )
            self._collection = with_search_ef(
                self._client.get_or_create_collection(
                    self.collection_name,
                    metadata={"hnsw:space": "cosine"},
                    embedding_function=None,  # never embed on the store's side
                )
            )
        except Exception as exc:
            self._client = self._collection = None
            raise self._breaker.trip(self._unavailable(exc)) from exc
        self._breaker.reset()
        return self._collection

    def _call(self, fn: Callable[[Any], T]) -> T:
        collection = self._connect()
        try:
            return fn(collection)
        except Exception as exc:
            if _is_connection_error(exc):
                self._client = self._collection = None  # reconnect on the next call
                raise self._breaker.trip(self._unavailable(exc)) from exc
            raise

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"the Chroma server at {self.url} cannot be reached ({type(exc).__name__}: {exc}); "
            "start it (`chroma run --path DIR --port N`), or check `chroma_url` and "
            "`chroma_headers`"
        )

    def close(self) -> None:
        self._client = self._collection = None

    def check(self) -> None:
        """Raise `StoreUnavailableError` unless the server answers (start-up, status)."""
        self._call(lambda c: c.count())

    # -- the VectorStore protocol -------------------------------------------------------------
    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        rows = list(zip(ids, vectors, texts, metadatas, strict=True))
        for part in batches(rows, WRITE_BATCH):
            self._call(
                lambda c, part=part: c.upsert(
                    ids=[r[0] for r in part],
                    embeddings=[list(map(float, r[1])) for r in part],
                    documents=[r[2] for r in part],
                    metadatas=[scalar_metadata(r[3]) for r in part],
                )
            )

    def delete(self, ids: Sequence[str]) -> None:
        for part in batches(list(ids), WRITE_BATCH):
            self._call(lambda c, part=part: c.delete(ids=list(part)))

    def ids(self) -> set[str]:
        found: set[str] = set()
        offset = 0
        while True:
            page = self._call(
                lambda c, offset=offset: c.get(include=[], limit=READ_PAGE, offset=offset)
            )
            found.update(page["ids"])
            if len(page["ids"]) < READ_PAGE:
                return found
            offset += READ_PAGE

    def reset(self) -> None:
        self._connect()
        try:
            self._client.delete_collection(self.collection_name)
        except Exception as exc:
            if _is_connection_error(exc):
                self._client = self._collection = None
                raise self._unavailable(exc) from exc
            # already gone: nothing to drop
        self._collection = None
        self._connect()

    def count(self) -> int:
        return int(self._call(lambda c: c.count()))

    def search(
        self, vector: Sequence[float], k: int, note_paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        if k <= 0 or (note_paths is not None and not note_paths):
            return []
        total = self.count()
        if total == 0:
            return []
        where = {"note_path": {"$in": list(note_paths)}} if note_paths is not None else None
        result = self._call(
            lambda c: c.query(
                query_embeddings=[list(map(float, vector))],
                n_results=min(k, total),
                where=where,
                include=["distances"],
            )
        )
        ids = result["ids"][0]
        distances = result["distances"][0] if result["distances"] else [0.0] * len(ids)
        # Chroma's cosine space returns 1 - cosine similarity.
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]


def _is_connection_error(exc: BaseException) -> bool:
    """Transport failures and refused credentials, as opposed to a bad request."""
    import httpx
    from chromadb.errors import AuthorizationError, ChromaAuthError

    if isinstance(exc, httpx.TransportError | ConnectionError | ChromaAuthError):
        return True
    if isinstance(exc, AuthorizationError):
        return True
    text = str(exc).lower()
    return any(marker in text for marker in ("could not connect", "unauthorized", "forbidden"))
