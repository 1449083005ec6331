"""A re-ranking service behind the `/v1/rerank` shape that llama.cpp (`--reranking`), Text
Embeddings Inference, vLLM, Jina and Cohere share.

Request (one POST per search): ``{"model": M, "query": Q, "documents": [..], "top_n": N,
"return_documents": false}`` (`model` left out when none is configured; TEI's own ``/rerank``
route gets the documents as ``texts`` too). Accepted replies:

* ``{"results": [{"index": i, "relevance_score": s}, …]}`` — llama.cpp, vLLM, Jina, Cohere
  (v1 and v2; a ``document`` field or ``meta`` / ``usage`` alongside are ignored);
* ``[{"index": i, "score": s}, …]`` — TEI's native ``/rerank``;
* ``{"data": [...]}`` with the same items (some OpenAI-style proxies).

Items may come in any order (most services sort by score). A document the reply leaves out
ranks below every scored one. Anything else — an HTTP error, a timeout, an index out of range,
a score that is not a finite number — is a `RerankError`, and the search keeps its fused order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from vault_rag.retrieval.rerank.base import RerankError, RerankHealth

DEFAULT_PATH = "/v1/rerank"


def endpoint(url: str) -> str:
    """The full endpoint: a bare server address gets `/v1/rerank`; a path is kept as given."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"rerank_url must be an http(s) URL, not {url!r}")
    path = parts.path.rstrip("/")
    return url.strip().rstrip("/") + ("" if path else DEFAULT_PATH)


class HttpReranker:
    kind = "http"

    def __init__(
        self,
        url: str,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = endpoint(url)
        self.model = model
        self.label = f"{model or 'reranker'} at {self.url}"
        self.health = RerankHealth()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            timeout=timeout, headers=headers, transport=transport, trust_env=False
        )

    def request_body(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "query": query,
            "documents": list(documents),
            "top_n": len(documents),
            "return_documents": False,
        }
        if self.model:
            body["model"] = self.model
        if urlsplit(self.url).path.rstrip("/") == "/rerank":
            body["texts"] = body["documents"]  # TEI's native route names them `texts`
        return body

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        try:
            response = self._client.post(self.url, json=self.request_body(query, documents))
        except httpx.TimeoutException as exc:
            raise RerankError("the re-ranker timed out") from exc
        except httpx.HTTPError as exc:
            raise RerankError(f"the re-ranker is unreachable ({type(exc).__name__})") from exc
        if response.status_code != 200:
            raise RerankError(
                f"the re-ranker answered HTTP {response.status_code}: {_short(response.text)}"
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise RerankError("the re-ranker's reply is not JSON") from exc
        return parse_scores(payload, len(documents))

    def close(self) -> None:
        self._client.close()


def parse_scores(payload: Any, count: int) -> list[float]:
    """One score per document from any accepted reply shape (see the module doc)."""
    items = payload
    if isinstance(payload, dict):
        items = payload.get("results", payload.get("data"))
    if not isinstance(items, list) or (count and not items):
        raise RerankError("the re-ranker's reply has no results list")
    scores = [-math.inf] * count
    for item in items:
        if not isinstance(item, dict):
            raise RerankError("a result of the re-ranker is not an object")
        index = item.get("index")
        value = item.get("relevance_score", item.get("score"))
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
            raise RerankError(f"the re-ranker returned an index out of range: {index!r}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RerankError(f"the re-ranker returned a score that is not a number: {value!r}")
        if not math.isfinite(value):
            raise RerankError("the re-ranker returned a score that is not finite")
        scores[index] = float(value)
    return scores


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
