"""ASGI middleware: the Host check, CORS for the allowed origins only (with Private Network
Access), and the request body limits (size and time).

CORS: a request carrying an `Origin` that is not allowed is refused with 403 before it reaches
a route, so a web page open in the user's browser can neither read from nor write to the
sidecar (the bearer token already stops it; this keeps even failed attempts out of the index
code). Requests without `Origin` (scripts, the CLI, agents) are not CORS's business. Chrome's
Private Network Access preflight (`Access-Control-Request-Private-Network: true`) is answered
with `Access-Control-Allow-Private-Network: true` for allowed origins.
"""

from __future__ import annotations

import json

import anyio
from fastapi import HTTPException
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS"
ALLOWED_HEADERS = "authorization, content-type, last-event-id"
PREFLIGHT_MAX_AGE = "600"


async def send_json(
    send: Send, status: int, body: dict[str, object], headers: dict[str, str]
) -> None:
    payload = json.dumps({"detail": None, **body}).encode()  # the ErrorBody shape
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


class CORSMiddleware:
    def __init__(self, app: ASGIApp, allow_origins: list[str]) -> None:
        self.app = app
        self.origins = frozenset(allow_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is None:
            await self.app(scope, receive, send)
            return
        if origin not in self.origins:
            await send_json(
                send,
                403,
                {"code": "origin_not_allowed", "message": f"origin {origin!r} is not allowed"},
                {"vary": "Origin"},
            )
            return
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await self._preflight(origin, headers, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                out["Access-Control-Allow-Origin"] = origin
                out.add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, send_with_cors)

    async def _preflight(self, origin: str, headers: Headers, send: Send) -> None:
        out = {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": ALLOWED_METHODS,
            "Access-Control-Allow-Headers": ALLOWED_HEADERS,
            "Access-Control-Max-Age": PREFLIGHT_MAX_AGE,
            "Vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, "
            "Access-Control-Request-Private-Network",
        }
        if headers.get("access-control-request-private-network", "").lower() == "true":
            out["Access-Control-Allow-Private-Network"] = "true"
        raw = [(k.lower().encode(), v.encode()) for k, v in out.items()]
        await send({"type": "http.response.start", "status": 204, "headers": raw})
        await send({"type": "http.response.body", "body": b""})


class HostCheckMiddleware:
    """400 with the error body for a `Host` other than the loopback names: a DNS-rebinding page
    (attacker.example resolving to 127.0.0.1) cannot reach the API. (Starlette's own
    `TrustedHostMiddleware` answers in plain text.)"""

    def __init__(self, app: ASGIApp, allowed_hosts: list[str]) -> None:
        self.app = app
        self.hosts = frozenset(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name not in self.hosts:
            message = f"host {host!r} is not allowed; use 127.0.0.1 or localhost"
            await send_json(send, 400, {"code": "invalid_host", "message": message}, {})
            return
        await self.app(scope, receive, send)


class BodyTooLarge(HTTPException):
    """Raised from `receive` so FastAPI's body parsing re-raises it as is (not as a 400)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")
        self.code = "body_too_large"


class BodyTimeout(HTTPException):
    """The client stopped sending its body (raised from `receive`, as `BodyTooLarge`)."""

    def __init__(self, seconds: float) -> None:
        # `Connection: close`: the rest of an unfinished body must not be read as a request.
        message = f"the request body did not arrive within {seconds:g} s"
        super().__init__(408, message, headers={"Connection": "close"})
        self.code = "body_timeout"


class BodyLimitMiddleware:
    """The request body's size and time limits.

    Size: 413 for a body over `max_bytes`, at once from `Content-Length`, else while it streams.
    Time: the whole body must arrive within `timeout` seconds of the request's start, else 408
    and the connection is closed. uvicorn's `timeout_keep_alive` covers only idle connections
    between requests, so without this a client that declares `Content-Length: 1000` and sends 9
    bytes holds a connection (and a server task) forever. Reads after the body is complete
    (an SSE route waiting for `http.disconnect`) are not limited.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, timeout: float = 10.0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            status, code = (413, "body_too_large") if declared.isdigit() else (400, "bad_request")
            message = f"the request body is larger than {self.max_bytes} bytes"
            await send_json(send, status, {"code": code, "message": message}, {})
            return
        received = 0
        body_done = False
        started = False
        deadline = anyio.current_time() + self.timeout

        async def limited_receive() -> Message:
            nonlocal received, body_done
            if body_done:
                return await receive()
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                message = await receive()
                if message["type"] == "http.request":
                    received += len(message.get("body", b""))
                    body_done = not message.get("more_body", False)
                    if received > self.max_bytes:
                        raise BodyTooLarge(self.max_bytes)
                return message
            raise BodyTimeout(self.timeout)

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except (BodyTooLarge, BodyTimeout) as exc:
            if started:
                raise
            body = {"code": exc.code, "message": str(exc.detail)}
            await send_json(send, exc.status_code, body, dict(exc.headers or {}))


BodySizeLimitMiddleware = BodyLimitMiddleware  # the earlier name
