"""A wire-level fake of a `/v1/rerank` service for tests: standard library only, no network.

It listens on 127.0.0.1 (a free port) in a background thread and answers ``POST`` on any path
the way the real services do, in the shape chosen by `shape`:

* ``"llama.cpp"`` — ``{"model", "object": "list", "usage", "results": [{"index",
  "relevance_score"}]}`` sorted by score (llama-server ``--reranking``, vLLM);
* ``"jina"`` — ``{"model", "usage": {"total_tokens"}, "results": [{"index", "document":
  {"text"}, "relevance_score"}]}`` cut to ``top_n``;
* ``"cohere"`` — ``{"id", "results": [{"index", "relevance_score"}], "meta": {...}}``;
* ``"tei"`` — TEI's native ``/rerank``: a bare list ``[{"index", "score"}]`` (documents read from
  ``texts``);
* ``"data"`` — ``{"data": [{"index", "score"}]}`` (OpenAI-style proxies).

Scores are deterministic: the share of the query's words found in each document (a stand-in
for a cross-encoder; what matters here is the protocol). `api_key` makes it answer 401 to
requests without ``Authorization: Bearer <key>``, as the hosted services do. `queue_failure`
scripts the next reply: an HTTP status with a body, a raw body (garbled JSON, wrong shapes)
or a delay longer than the client's timeout. Every request is recorded in `requests`.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SHAPES = ("llama.cpp", "jina", "cohere", "tei", "data")
_WORD = re.compile(r"\w+")


@dataclass
class Failure:
    status: int = 200
    body: str | None = None  # raw body; None: the normal reply
    delay: float = 0.0  # seconds before answering


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeRerankServer:
    shape: str = "llama.cpp"
    api_key: str | None = None
    requests: list[Recorded] = field(default_factory=list)
    _failures: deque[Failure] = field(default_factory=deque)

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {SHAPES}")
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeRerankServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        path = "/rerank" if self.shape == "tei" else "/v1/rerank"
        return f"http://{host}:{port}{path}"

    def queue_failure(self, failure: Failure) -> None:
        self._failures.append(failure)

    @staticmethod
    def relevance(query: str, document: str) -> float:
        words = {w.casefold() for w in _WORD.findall(query)}
        have = {w.casefold() for w in _WORD.findall(document)}
        return round(len(words & have) / max(1, len(words)), 6)

    def reply(self, body: dict[str, Any]) -> tuple[int, Any]:
        documents = body.get("texts" if self.shape == "tei" else "documents")
        query = body.get("query")
        if not isinstance(query, str) or not isinstance(documents, list):
            return 422, {"error": "query and documents are required"}
        scored = sorted(
            ((i, self.relevance(query, str(d))) for i, d in enumerate(documents)),
            key=lambda pair: -pair[1],
        )
        top_n = body.get("top_n") or len(documents)
        if self.shape == "tei":
            return 200, [{"index": i, "score": s} for i, s in scored]
        if self.shape == "data":
            return 200, {"data": [{"index": i, "score": s} for i, s in scored]}
        if self.shape == "cohere":
            results = [{"index": i, "relevance_score": s} for i, s in scored[:top_n]]
            return 200, {"id": "fake", "results": results, "meta": {"billed_units": {}}}
        if self.shape == "jina":
            results = [
                {"index": i, "document": {"text": documents[i]}, "relevance_score": s}
                for i, s in scored[:top_n]
            ]
            return 200, {
                "model": body.get("model"),
                "usage": {"total_tokens": 1},
                "results": results,
            }
        results = [{"index": i, "relevance_score": s} for i, s in scored]
        return 200, {
            "model": body.get("model", "fake"),
            "object": "list",
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
            "results": results,
        }


def _handler(fake: FakeRerankServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = None
            fake.requests.append(Recorded(self.path, dict(self.headers), body))
            failure = fake._failures.popleft() if fake._failures else Failure()
            if failure.delay:
                time.sleep(failure.delay)
            if fake.api_key and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
                self._send(401, json.dumps({"message": "invalid api token"}))
            elif failure.body is not None or failure.status != 200:
                self._send(failure.status, failure.body or json.dumps({"error": "failed"}))
            elif not isinstance(body, dict):
                self._send(400, json.dumps({"error": "body must be a JSON object"}))
            else:
                status, payload = fake.reply(body)
                self._send(status, json.dumps(payload))

        def _send(self, status: int, text: str) -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)  # the client may have timed out and left

    return Handler
