"""ASGI middleware: CORS for the allowed origins only (with Private Network Access), and the
request body size limit.

CORS: a request carrying an `Origin` that is not allowed is refused with 403 before it reaches
a route, so a web page open in the user's browser can neither read from nor write to the
sidecar (the bearer token already stops it; this keeps even failed attempts out of the index
code). Requests without `Origin` (scripts, the CLI, agents) are not CORS's business. Chrome's
Private Network Access preflight (`Access-Control-Request-Private-Network: true`) is answered
with `Access-Control-Allow-Private-Network: true` for allowed origins.
"""

from __future__ import annotations

import json

from fastapi import HTTPException
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS"
ALLOWED_HEADERS = "authorization, content-type, last-event-id"
PREFLIGHT_MAX_AGE = "600"


async def send_json(
    send: Send, status: int, body: dict[str, object], headers: dict[str, str]
) -> None:
    payload = json.dumps(body).encode()
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


class BodyTooLarge(HTTPException):
    """Raised from `receive` so FastAPI's body parsing re-raises it as is (not as a 400)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")
        self.code = "body_too_large"


class BodySizeLimitMiddleware:
    """413 for a body over `max_bytes`: at once from `Content-Length`, else while it streams."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

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
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge as exc:
            if started:
                raise
            await send_json(send, 413, {"code": exc.code, "message": str(exc.detail)}, {})
