"""A documentation site for the web source's tests: a threaded `http.server` on 127.0.0.1 that
serves pages the test writes (with ETag / Last-Modified and 304s, like a static host) and
handlers for each fault (redirect loops, 429 with Retry-After, a slow or never-ending body, …).
It records every request (path and headers), so tests can count fetches and check what was
sent. Nothing here talks to anything but loopback."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LAST_MODIFIED = "Wed, 01 Jul 2026 10:00:00 GMT"


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    validators: bool = True  # send ETag and Last-Modified, answer 304 to a match


Handler = Callable[[BaseHTTPRequestHandler], None]


class Site:
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.handlers: dict[str, Handler] = {}
        self.prefix_handlers: dict[str, Handler] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.down = False  # every request answered by closing the connection
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- content ---------------------------------------------------------------------------
    def page(self, path: str, body: str | bytes, **kw: object) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.pages[path] = Page(data, **kw)  # type: ignore[arg-type]

    def handle(self, path: str, handler: Handler, *, prefix: bool = False) -> None:
        (self.prefix_handlers if prefix else self.handlers)[path] = handler

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def url(self, path: str = "/") -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    # --- serving ---------------------------------------------------------------------------
    def start(self) -> Site:
        site = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                site.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                if site.down:
                    self.close_connection = True
                    self.connection.close()
                    return
                handler = site.handlers.get(self.path)
                if handler is None:
                    for prefix, candidate in site.prefix_handlers.items():
                        if self.path.startswith(prefix):
                            handler = candidate
                            break
                if handler is not None:
                    handler(self)
                    return
                page = site.pages.get(self.path)
                if page is None:
                    send(self, 404, b"not found", "text/plain")
                    return
                headers = dict(page.headers)
                if page.validators and page.status == 200:
                    etag = '"' + hashlib.sha256(page.body).hexdigest()[:16] + '"'
                    headers |= {"ETag": etag, "Last-Modified": LAST_MODIFIED}
                    if self.headers.get("If-None-Match") == etag:
                        send(self, 304, b"", None, headers)
                        return
                send(self, page.status, page.body, page.content_type, headers)

        self._server = _Quiet(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> Site:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # a client hanging up: expected
        pass


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    content_type: str | None,
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    if content_type:
        handler.send_header("Content-Type", content_type)
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if body:
        handler.wfile.write(body)


def redirect(location: str) -> Handler:
    def run(handler: BaseHTTPRequestHandler) -> None:
        send(handler, 302, b"", None, {"Location": location})

    return run


def endless(handler: BaseHTTPRequestHandler) -> None:
    """A body that never ends (chunked, no length), until the client hangs up."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    piece = b"<p>" + b"more words and more " * 200 + b"</p>"
    try:
        while True:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
    except OSError:
        return


def slow(seconds: float) -> Handler:
    """Headers only after `seconds`."""

    def run(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        try:
            send(handler, 200, b"<html><body><p>late</p></body></html>", "text/html")
        except OSError:
            return

    return run


def dripping(handler: BaseHTTPRequestHandler) -> None:
    """Headers at once, then a byte every 0.2 s for ever: no read ever times out."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    try:
        while True:
            handler.wfile.write(b"1\r\nx\r\n")
            handler.wfile.flush()
            time.sleep(0.2)
    except OSError:
        return
