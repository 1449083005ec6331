"""A wire-level fake of Tavily's HTTP API for tests: standard library only, no network.

It listens on 127.0.0.1 (a free port) and answers the two endpoints `langchain-tavily` calls,
with the request and response shapes of Tavily's API:

* ``POST /search`` — body ``{"query", "max_results", "include_domains", "exclude_domains",
  "search_depth", ...}``; answers ``{"query", "answer", "images", "follow_up_questions",
  "results": [{"title", "url", "content", "score", "raw_content"}], "response_time",
  "request_id"}``. Pages are ranked by how many query words they contain; pages with no
  match are not returned. ``include_domains`` is honoured unless `ignore_domains` is set (to
  test the client's own domain check).
* ``POST /extract`` — body ``{"urls", "extract_depth", "query", ...}``; answers
  ``{"results": [{"url", "raw_content", "images"}], "failed_results": [{"url", "error"}],
  "response_time", "request_id"}``.

Both require ``Authorization: Bearer <api_key>`` (401 with Tavily's ``{"detail": {"error"}}``
otherwise). Every request is recorded. Point the wrapper at it with
``TavilySearch(api_base_url=server.base_url, tavily_api_key=server.api_key)``.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

__all__ = ["FakePage", "FakeTavilyServer"]


@dataclass(frozen=True)
class FakePage:
    url: str
    title: str
    content: str  # the search snippet
    raw_content: str  # what /extract returns (may hold "[...]" placeholders, like Tavily's)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


def _host_matches(url: str, domains: list[str]) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return any(host == d.lower() or host.endswith("." + d.lower()) for d in domains)


class FakeTavilyServer:
    def __init__(
        self, pages: list[FakePage], *, api_key: str = "tvly-test", ignore_domains: bool = False
    ) -> None:
        self.pages = list(pages)
        self.api_key = api_key
        self.ignore_domains = ignore_domains
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._errors: deque[tuple[str | None, int]] = deque()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeTavilyServer:
        handler = type("_Bound", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.path == path]

    def queue_error(self, status: int = 500, path: str | None = None) -> None:
        """Fail the next request to `path` ("/search", "/extract"; None = any) with `status`."""
        with self._lock:
            self._errors.append((path, status))

    def _next_error(self, path: str) -> int | None:
        for i, (target, status) in enumerate(self._errors):
            if target is None or target == path:
                del self._errors[i]
                return status
        return None

    # -- behaviour --------------------------------------------------------------------------
    def search(self, body: dict[str, Any]) -> dict[str, Any]:
        words = {w for w in re.findall(r"\w+", str(body.get("query", "")).lower()) if len(w) > 2}
        include = list(body.get("include_domains") or [])
        exclude = list(body.get("exclude_domains") or [])
        scored = []
        for page in self.pages:
            if include and not self.ignore_domains and not _host_matches(page.url, include):
                continue
            if exclude and _host_matches(page.url, exclude):
                continue
            text = f"{page.title} {page.content} {page.raw_content}".lower()
            hits = sum(1 for w in words if w in text)
            if hits:
                scored.append((hits / max(1, len(words)), page))
        scored.sort(key=lambda item: -item[0])
        limit = int(body.get("max_results") or 5)
        results = [
            {
                "title": page.title,
                "url": page.url,
                "content": page.content,
                "score": round(0.5 + score / 2, 4),
                "raw_content": None,
            }
            for score, page in scored[:limit]
        ]
        return {
            "query": body.get("query"),
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": results,
            "response_time": 0.01,
            "request_id": uuid.uuid4().hex,
        }

    def extract(self, body: dict[str, Any]) -> dict[str, Any]:
        by_url = {page.url: page for page in self.pages}
        results, failed = [], []
        for url in body.get("urls") or []:
            page = by_url.get(url)
            if page is None:
                failed.append({"url": url, "error": "Failed to fetch url"})
            else:
                results.append({"url": url, "raw_content": page.raw_content, "images": []})
        return {
            "results": results,
            "failed_results": failed,
            "response_time": 0.01,
            "request_id": uuid.uuid4().hex,
        }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeTavilyServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        with fake._lock:
            fake._requests.append(Recorded(path, headers, body))
            status = fake._next_error(path)
        if status is not None:
            self._send(status, {"detail": {"error": f"scripted failure {status}"}})
            return
        if headers.get("authorization") != f"Bearer {fake.api_key}":
            self._send(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
            return
        if not isinstance(body, dict):
            self._send(400, {"detail": {"error": "Invalid JSON body"}})
            return
        if path == "/search":
            self._send(200, fake.search(body))
        elif path == "/extract":
            self._send(200, fake.extract(body))
        else:
            self._send(404, {"detail": {"error": f"no route {path}"}})
