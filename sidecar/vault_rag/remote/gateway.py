"""The remote listener's ASGI app: only paired devices, only sealed messages.

Routes (nothing else answers; no `/v1` path, no bearer token):

* `GET /remote/v1/hello` — {service, version, server_id}: what a device checks before pairing.
* `POST /remote/v1/pair/start`, `POST /remote/v1/pair/finish` — `pairing.Pairing`.
* `POST /remote/v1/call` — header `X-Device`, body a sealed request (`envelope.py`). It is
  refused before anything is decrypted when larger than `remote_max_body_bytes` (413), when
  the device is unknown or revoked or the devices file damaged (401), when its counter was
  seen (409 `replayed`); then opened (401 if it does not authenticate, or its `ts` is more
  than `remote_clock_skew` seconds off), checked against the device's role
  (`allowed`), and forwarded in-process to the loopback app with the admin token and Host
  127.0.0.1. What comes back is sealed frame by frame as it comes (an answer's SSE events
  keep streaming). Between frames the device's state is checked: revoked, and the stream
  stops without its final frame.

CORS: a request with an `Origin` (the mobile plugin's `fetch`) must come from
`server_cors_origins`, else 403; preflights are answered for `content-type` and `x-device`.

Refusals before the device is known are plain JSON `{code, message}`, one generic 401 for
every authentication failure; after that, the answer is sealed, errors included. No log line
holds a code, a key or a request's plaintext.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from vault_rag import __version__
from vault_rag.remote import envelope, keys
from vault_rag.remote.devices import Device, DevicesError, DeviceStore
from vault_rag.remote.pairing import Pairing, PairingRefused

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNAUTHORIZED = "unknown or revoked device, or a message that does not authenticate"
_ID = r"[A-Za-z0-9_.:-]+"
READ_ROUTES = (
    ("GET", r"/v1/health"),
    ("GET", r"/v1/status"),
    ("GET", r"/v1/collections"),
    ("POST", r"/v1/search"),
    ("GET", r"/v1/related"),
    ("POST", r"/v1/ask"),
    ("GET", r"/v1/threads"),
    ("GET", rf"/v1/threads/{_ID}"),
    ("POST", rf"/v1/answers/{_ID}/feedback"),
)
WRITE_ROUTES = (
    ("PUT", r"/v1/notes"),
    ("DELETE", r"/v1/notes"),
    ("POST", r"/v1/notes/rename"),
    ("POST", r"/v1/notes/changed"),
    ("POST", rf"/v1/answers/{_ID}/promote"),
)
_COMPILED = {
    role: [(method, re.compile(pattern)) for method, pattern in routes]
    for role, routes in (("read", READ_ROUTES), ("write", READ_ROUTES + WRITE_ROUTES))
}
REVOCATION_POLL = 0.25  # seconds: how often a quiet stream looks at its device's state


def allowed(role: str, method: str, path: str) -> bool:
    """Whether a device of `role` may make this request (never settings, models, embeddings,
    exclusions, sources, devices; note writes only for "write")."""
    if ".." in path or "//" in path:
        return False
    return any(m == method and p.fullmatch(path) for m, p in _COMPILED.get(role, []))


async def _send_plain(
    send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    payload = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


class _TooLarge(Exception):
    pass


class _Timeout(Exception):
    pass


async def _read_body(scope: Scope, receive: Receive, limit: int, timeout: float) -> bytes:
    """The whole body, or `_TooLarge` (by Content-Length at once, else while it streams)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length" and (not value.isdigit() or int(value) > limit):
            raise _TooLarge
    chunks, size = [], 0
    with anyio.move_on_after(timeout) as scope_timer:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Timeout
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
    assert scope_timer.cancelled_caught
    raise _Timeout


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _with_cors(send: Send, origin: str) -> Send:
    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            extra = [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"access-control-expose-headers", b"retry-after"),
                (b"vary", b"Origin"),
            ]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return send_with_cors


class Gateway:
    def __init__(
        self,
        store: DeviceStore,
        pairing: Pairing,
        target: ASGIApp,
        token: Callable[[], str],
        *,
        max_body: int = 1024 * 1024,
        body_timeout: float = 10.0,
        clock_skew: float = 300.0,
        origins: tuple[str, ...] = (
            "app://obsidian.md",
            "capacitor://localhost",
            "http://localhost",
        ),
    ) -> None:
        self.origins = frozenset(origins)
        self.store = store
        self.pairing = pairing
        self.target = target
        self.token = token
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.clock_skew = clock_skew

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return  # websockets: closed unanswered
        method, path = scope["method"], scope["path"]
        origin = _header(scope, b"origin")
        if origin is not None:  # a browser (the mobile plugin's fetch): allowed origins only
            if origin not in self.origins:
                refusal = {"code": "origin_not_allowed", "message": "origin not allowed"}
                await _send_plain(send, 403, refusal, {"Vary": "Origin"})
                return
            if method == "OPTIONS" and _header(scope, b"access-control-request-method"):
                await self._preflight(scope, origin, send)
                return
            send = _with_cors(send, origin)
        if _header(scope, b"authorization") is not None:
            # The loopback admin token (or any bearer token) means nothing here.
            await _send_plain(send, 401, {"code": "unauthorized", "message": UNAUTHORIZED})
            return
        try:
            if (method, path) == ("GET", "/remote/v1/hello"):
                hello = {
                    "service": "vault-rag-remote",
                    "version": __version__,
                    "server_id": self.store.server_id,
                }
                await _send_plain(send, 200, hello)
            elif method == "POST" and path in ("/remote/v1/pair/start", "/remote/v1/pair/finish"):
                await self._pair(scope, receive, send, path.rsplit("/", 1)[1])
            elif (method, path) == ("POST", "/remote/v1/call"):
                await self._call(scope, receive, send)
            else:
                await _send_plain(send, 404, {"code": "not_found", "message": "no such route"})
        except _TooLarge:
            message = f"the request body is larger than {self.max_body} bytes"
            await _send_plain(send, 413, {"code": "body_too_large", "message": message})
        except _Timeout:
            message = f"the request body did not arrive within {self.body_timeout:g} s"
            await _send_plain(
                send, 408, {"code": "body_timeout", "message": message}, {"Connection": "close"}
            )

    async def _preflight(self, scope: Scope, origin: str, send: Send) -> None:
        headers = {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
            "Access-Control-Allow-Headers": "content-type, x-device",
            "Access-Control-Max-Age": "600",
            "Vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, "
            "Access-Control-Request-Private-Network",
        }
        if (_header(scope, b"access-control-request-private-network") or "").lower() == "true":
            headers["Access-Control-Allow-Private-Network"] = "true"
        raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": 204, "headers": raw})
        await send({"type": "http.response.body", "body": b""})

    async def _pair(self, scope: Scope, receive: Receive, send: Send, step: str) -> None:
        raw = await _read_body(scope, receive, self.max_body, self.body_timeout)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        try:
            run = self.pairing.start if step == "start" else self.pairing.finish
            answer = await anyio.to_thread.run_sync(run, body)
        except PairingRefused as exc:
            log.info("pairing %s refused: %s", step, exc.code)
            headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else {}
            await _send_plain(send, exc.status, {"code": exc.code, "message": exc.message}, headers)
            return
        if step == "finish":
            log.info("a device was paired")
        await _send_plain(send, 200, answer)

    async def _call(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = await _read_body(scope, receive, self.max_body, self.body_timeout)
        device_id = _header(scope, b"x-device") or ""
        device = self.store.get(device_id) if device_id.isascii() else None
        if device is None:
            log.info("remote call refused: unknown or revoked device")
            await _send_plain(send, 401, {"code": "unauthorized", "message": UNAUTHORIZED})
            return
        try:
            counter = envelope.request_counter(raw)
        except envelope.EnvelopeError:
            await _send_plain(send, 400, {"code": "bad_envelope", "message": UNAUTHORIZED})
            return
        if not self.store.fresh(device, counter):
            log.info("remote call refused: replayed counter (device %s)", device.id)
            await _send_plain(send, 409, {"code": "replayed", "message": "a replayed message"})
            return
        try:
            _, request = envelope.open_request(device.key_bytes, device.id, raw)
            ts = float(request.get("ts", 0))
        except (envelope.EnvelopeError, TypeError, ValueError):
            log.info("remote call refused: does not authenticate (device %s)", device.id)
            await _send_plain(send, 401, {"code": "unauthorized", "message": UNAUTHORIZED})
            return
        if abs(time.time() - ts) > self.clock_skew:
            await _send_plain(
                send,
                401,
                {"code": "stale", "message": "the message's clock is too far from the sidecar's"},
            )
            return
        try:
            accepted = await anyio.to_thread.run_sync(self.store.accept, device, counter)
        except DevicesError:
            accepted = False
        if not accepted:
            await _send_plain(send, 409, {"code": "replayed", "message": "a replayed message"})
            return
        reply = _Sealer(device, counter, send)
        method, path = str(request.get("method", "")).upper(), str(request.get("path", ""))
        query = request.get("query") or ""
        if not isinstance(query, str) or not allowed(device.role, method, path):
            refusal = f"a {device.role} device cannot {method} {path}"
            await reply.whole(403, {"code": "not_allowed", "message": refusal})
            return
        await self._forward(scope, reply, receive, method, path, query, request.get("body"))

    async def _forward(
        self,
        outer: Scope,
        reply: _Sealer,
        receive: Receive,
        method: str,
        path: str,
        query: str,
        body: Any,
    ) -> None:
        payload = b"" if body is None else json.dumps(body).encode("utf-8")
        headers = [
            (b"host", b"127.0.0.1"),
            (b"authorization", f"Bearer {self.token()}".encode()),
            (b"content-length", str(len(payload)).encode()),
        ]
        if body is not None:
            headers.append((b"content-type", b"application/json"))
        inner: Scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": query.encode(),
            "headers": headers,
            "client": ("127.0.0.1", 0),
            "server": ("127.0.0.1", 0),
            "state": dict(outer.get("state", {})),
            "extensions": {},
        }
        gone = anyio.Event()  # the device hung up, or the stream was stopped
        sent_body = False

        async def inner_receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": payload, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        out_send, out_receive = anyio.create_memory_object_stream[Message](16)

        async def run_target() -> None:
            async with out_send:
                try:
                    await self.target(inner, inner_receive, out_send.send)
                except anyio.get_cancelled_exc_class():
                    raise
                except Exception:
                    log.exception("a forwarded request failed")

        async def watch_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run_target)
            finished = False
            try:
                async with anyio.create_task_group() as watcher:
                    watcher.start_soon(watch_disconnect)
                    finished = await self._relay(reply, out_receive, gone)
                    watcher.cancel_scope.cancel()
            finally:
                if not finished:  # stopped: the loopback app's request is cancelled too
                    gone.set()
                    tasks.cancel_scope.cancel()

    async def _relay(
        self, reply: _Sealer, messages: MemoryObjectReceiveStream[Message], gone: anyio.Event
    ) -> bool:
        """Seal what the loopback app sends, frame by frame, while the device stays paired.
        True when the response was complete (its final frame sent)."""
        async with messages:
            while not gone.is_set():
                message = None
                with anyio.move_on_after(REVOCATION_POLL):
                    try:
                        message = await messages.receive()
                    except anyio.EndOfStream:
                        await reply.cut()  # the app ended without finishing its response
                        return False
                if not self.store.is_active(reply.device.id):
                    log.info("a revoked device's stream was stopped (device %s)", reply.device.id)
                    await reply.cut()
                    return False
                if message is None:
                    continue
                if message["type"] == "http.response.start":
                    content_type = "application/octet-stream"
                    for name, value in message.get("headers", []):
                        if name.lower() == b"content-type":
                            content_type = value.decode("latin-1")
                    await reply.head(message["status"], content_type)
                elif message["type"] == "http.response.body":
                    chunk = message.get("body", b"")
                    if chunk:
                        await reply.body(chunk)
                    if not message.get("more_body", False):
                        await reply.end()
                        return True
        return False


class _Sealer:
    """The gateway's response to one call: frames sealed for the device, in order."""

    def __init__(self, device: Device, counter: int, send: Send) -> None:
        self.device = device
        self.counter = counter
        self.send = send
        self.key = keys.response_key(device.key_bytes, counter)
        self.index = 0
        self.started = False

    async def _frame(self, payload: bytes, final: bool = False) -> None:
        if not self.started:
            self.started = True
            headers = [
                (b"content-type", b"application/octet-stream"),
                (b"cache-control", b"no-store"),
                (b"x-accel-buffering", b"no"),
            ]
            await self.send({"type": "http.response.start", "status": 200, "headers": headers})
        frame = envelope.seal_frame(
            self.key, self.device.id, self.counter, self.index, payload, final=final
        )
        self.index += 1
        await self.send({"type": "http.response.body", "body": frame, "more_body": not final})

    async def head(self, status: int, content_type: str) -> None:
        await self._frame(envelope.head_payload(status, content_type))

    async def body(self, chunk: bytes) -> None:
        await self._frame(chunk)

    async def end(self) -> None:
        await self._frame(b"", final=True)

    async def whole(self, status: int, body: dict[str, Any]) -> None:
        await self.head(status, "application/json")
        await self.body(json.dumps(body).encode())
        await self.end()

    async def cut(self) -> None:
        """End the HTTP response without the final frame: the device reports a cut answer."""
        if not self.started:
            await self.head(503, "application/json")
        await self.send({"type": "http.response.body", "body": b"", "more_body": False})


def create_gateway(
    store: DeviceStore, pairing: Pairing, target: ASGIApp, token: Callable[[], str], settings: Any
) -> Gateway:
    return Gateway(
        store,
        pairing,
        target,
        token,
        max_body=settings.remote_max_body_bytes,
        body_timeout=settings.server_body_timeout,
        clock_skew=settings.remote_clock_skew,
        origins=tuple(settings.server_cors_origins),
    )
