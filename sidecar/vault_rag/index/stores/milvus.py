"""Milvus: a server or cluster (`milvus_uri`, `milvus_token`) or Milvus Lite (a local `.db`).

Driven through pymilvus's `MilvusClient` directly rather than langchain-milvus: we pass
precomputed vectors under our own chunk ids and need exact upsert/delete by id, listing every
id (reconcile), and a `note_path in [...]` filter; langchain-milvus wraps an embedding function
and its own id/text fields around the same client and would only add a layer to translate.

Schema: `id` (VARCHAR primary key, the chunk id), `vector` (FLOAT_VECTOR, COSINE index),
`note_path` (VARCHAR, filtered on), `text` (VARCHAR, for people inspecting the collection);
the other metadata go to Milvus's dynamic field as scalars. The collection is created on the
first upsert, when the vectors' dimension is known, with Strong consistency so a read after a
write sees it (reconcile compares ids right after writing).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from vault_rag.index.stores.base import (
    Breaker,
    StoreUnavailableError,
    batches,
    scalar_metadata,
)

T = TypeVar("T")
WRITE_BATCH = 500  # rows per request: stays well under the gRPC message limit at dim 1024+
ID_MAX = 512
PATH_MAX = 4096
TEXT_MAX = 65535  # bytes (VARCHAR's limit); text is informational, search never reads it
MAX_TOPK = 16384  # Milvus refuses larger limits


def is_lite_uri(uri: str) -> bool:
    """Milvus Lite is a local path ending in `.db`; anything else is a server address."""
    return "://" not in uri and uri.endswith(".db")


class MilvusStore:
    kind = "milvus"

    def __init__(
        self,
        uri: str,
        collection: str,
        token: str | None = None,
        timeout: float = 10.0,
        retry_after: float = 5.0,
    ) -> None:
        self.uri = uri
        self.collection_name = collection
        self._token = token or ""
        self._timeout = timeout
        self._client: Any = None
        self._exists: bool | None = None  # cached has_collection
        self._breaker = Breaker(retry_after)

    @property
    def location(self) -> str:
        if is_lite_uri(self.uri):
            return self.uri
        parts = urlsplit(self.uri)  # never show credentials written into the URI
        return parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]).geturl()

    # -- connection ---------------------------------------------------------------------------
    def _connect(self) -> Any:
        if self._client is not None:
            return self._client
        self._breaker.check()
        try:
            from pymilvus import MilvusClient

            if is_lite_uri(self.uri):
                Path(self.uri).parent.mkdir(parents=True, exist_ok=True)
                self._client = MilvusClient(self.uri)
            else:
                self._client = MilvusClient(uri=self.uri, token=self._token, timeout=self._timeout)
        except ImportError as exc:
            raise StoreUnavailableError(
                "the milvus backend needs pymilvus (and milvus-lite for a local .db): "
                "pip install 'vault-rag[milvus]'"
            ) from exc
        except Exception as exc:
            raise self._breaker.trip(self._unavailable(exc)) from exc
        self._breaker.reset()
        return self._client

    def _call(self, fn: Callable[[Any], T]) -> T:
        client = self._connect()
        try:
            return fn(client)
        except Exception as exc:
            if _is_connection_error(exc):
                self._drop_client()
                raise self._breaker.trip(self._unavailable(exc)) from exc
            raise

    def close(self) -> None:
        if self._client is not None:
            self._drop_client()

    def _drop_client(self) -> None:
        client, self._client, self._exists = self._client, None, None
        with contextlib.suppress(Exception):  # already broken: nothing to release
            client.close()

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        reason = f"{type(exc).__name__}: {_first_line(exc)}"
        if is_lite_uri(self.uri):
            return StoreUnavailableError(
                f"the Milvus Lite file {self.uri} cannot be opened ({reason}); Milvus Lite "
                "allows one process at a time (stop `vault-rag serve` first, or set "
                "`milvus_uri` to a Milvus server)"
            )
        return StoreUnavailableError(
            f"Milvus at {self.uri} cannot be reached ({reason}); check that the server runs "
            "and `milvus_uri` / `milvus_token` are right"
        )

    def check(self) -> None:
        """Raise `StoreUnavailableError` unless the server answers (start-up, status)."""
        self._call(lambda c: c.list_collections())

    def _has_collection(self) -> bool:
        if self._exists is None:
            exists = bool(self._call(lambda c: c.has_collection(self.collection_name)))
            if exists:
                # A collection written by an earlier process (or before a server restart) is
                # "released": it must be loaded before search or query. Loading is idempotent.
                self._call(lambda c: c.load_collection(self.collection_name))
            self._exists = exists
        return self._exists

    def _create(self, dimension: int) -> None:
        from pymilvus import DataType, MilvusClient

        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=True)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
        schema.add_field("note_path", DataType.VARCHAR, max_length=PATH_MAX)
        schema.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX)

        def create(client: Any) -> None:
            params = client.prepare_index_params()
            params.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
            client.create_collection(
                self.collection_name,
                schema=schema,
                index_params=params,
                consistency_level="Strong",
            )

        self._call(create)
        self._exists = True

    # -- the VectorStore protocol -------------------------------------------------------------
    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        if not ids:
            return
        if not self._has_collection():
            self._create(len(vectors[0]))
        rows = [_row(i, v, t, m) for i, v, t, m in zip(ids, vectors, texts, metadatas, strict=True)]
        for part in batches(rows, WRITE_BATCH):
            self._call(lambda c, part=part: c.upsert(self.collection_name, list(part)))

    def delete(self, ids: Sequence[str]) -> None:
        if not ids or not self._has_collection():
            return
        for part in batches(list(ids), WRITE_BATCH):
            self._call(lambda c, part=part: c.delete(self.collection_name, ids=list(part)))

    def ids(self) -> set[str]:
        if not self._has_collection():
            return set()

        def collect(client: Any) -> set[str]:
            found: set[str] = set()
            iterator = client.query_iterator(
                self.collection_name, batch_size=1000, filter="", output_fields=["id"]
            )
            try:
                while rows := iterator.next():
                    found.update(r["id"] for r in rows)
            finally:
                iterator.close()
            return found

        return self._call(collect)

    def reset(self) -> None:
        """Drop the collection; the next upsert creates it with the new vectors' dimension."""
        self._call(lambda c: c.drop_collection(self.collection_name))
        self._exists = False

    def count(self) -> int:
        if not self._has_collection():
            return 0
        # count(*) is exact after deletes; collection stats count deleted rows until compaction.
        rows = self._call(
            lambda c: c.query(self.collection_name, filter="", output_fields=["count(*)"])
        )
        return int(rows[0]["count(*)"])

    def search(
        self, vector: Sequence[float], k: int, note_paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        if k <= 0 or (note_paths is not None and not note_paths) or not self._has_collection():
            return []
        expr = ""
        if note_paths is not None:
            expr = "note_path in [" + ", ".join(_literal(p) for p in note_paths) + "]"
        hits = self._call(
            lambda c: c.search(
                self.collection_name,
                data=[list(map(float, vector))],
                limit=min(k, MAX_TOPK),
                filter=expr,
                output_fields=["id"],
                search_params={"metric_type": "COSINE"},
            )
        )
        # COSINE's "distance" is the similarity itself, best first.
        return [(str(h["id"]), float(h["distance"])) for h in hits[0]]


def _row(chunk_id: str, vector: Sequence[float], text: str, meta: dict[str, Any]) -> dict:
    extra = scalar_metadata(meta)
    extra.pop("id", None)
    extra.pop("vector", None)
    return {
        **extra,
        "id": chunk_id,
        "vector": [float(x) for x in vector],
        "note_path": str(meta.get("note_path", "")),
        "text": _truncate_bytes(text, TEXT_MAX),
    }


def _literal(value: str) -> str:
    """A Milvus filter string literal (double-quoted, backslash escapes)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _truncate_bytes(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]


def _is_connection_error(exc: BaseException) -> bool:
    """Transport failures and refused credentials, as opposed to a bad request."""
    from pymilvus.exceptions import MilvusUnavailableException

    if isinstance(exc, MilvusUnavailableException | ConnectionError | TimeoutError):
        return True
    try:
        import grpc

        if isinstance(exc, grpc.RpcError):
            return True
    except ImportError:
        pass
    text = str(exc).lower()
    markers = ("unavailable", "fail connecting", "connection refused", "auth", "denied", "token")
    return any(marker in text for marker in markers)
