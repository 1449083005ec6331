"""`/mcp` on `vault-rag serve`: the same tools over the streamable HTTP transport, stateless
(spec 2026-07-28: no session, every request stands alone), answered from the server's own
state (`local.LocalBackend`), so they see exactly what `/v1` sees.

It sits behind the app's middleware like every route: the `Host` check (loopback names only)
and CORS, which refuses a request whose `Origin` is not an allowed one with 403 (the MCP spec's
Origin check against DNS rebinding); the SDK checks `Host` and `Origin` again. Then the bearer
token: a request without the right one gets 401 with the API's error body and nothing else.
The server listens on 127.0.0.1 only (`api.app.HOST`).
"""

from __future__ import annotations

import hmac
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from vault_rag.mcp_server.limits import Limits
from vault_rag.mcp_server.local import LocalBackend
from vault_rag.mcp_server.server import build_server
from vault_rag.services.errors import ServiceError
from vault_rag.serving.in_flight import NotAdmitted, admit
from vault_rag.settings import Settings

PATH = "/mcp"
UNAUTHORIZED = {
    "code": "unauthorized",
    "message": "missing or wrong bearer token (see `vault-rag token --vault PATH`)",
}


class TokenGate:
    """401 (the API's error body, `WWW-Authenticate: Bearer`) unless the request carries the
    server's bearer token; compared in constant time. Then 503 (`starting`, `switching`) while
    there is no server state to hold (`serving/in_flight.py`)."""

    def __init__(self, app: ASGIApp, owner: Any) -> None:
        self.app = app
        self.owner = owner  # the FastAPI app: its token is set once it has started

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        expected: str | None = self.owner.state.token
        given = Headers(scope=scope).get("authorization", "")
        scheme, _, token = given.partition(" ")
        if (
            not expected
            or scheme.lower() != "bearer"
            or not token
            or not hmac.compare_digest(token.strip().encode(), expected.encode())
        ):
            await _error(scope, receive, send, 401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
            return
        try:  # held until the answer is sent: a switch of embedding model waits for it
            lease = admit(self.owner.state)
        except NotAdmitted as exc:  # starting, or switching the embedding model
            refused = {"code": exc.code, "message": exc.message}
            await _error(scope, receive, send, 503, refused, {})
            return
        with lease:
            await self.app(scope, receive, send)


def mount_mcp(app: Any, settings: Settings) -> AbstractAsyncContextManager[None]:
    """Add `/mcp` to the FastAPI `app`; returns what its lifespan must run (the SDK's request
    manager)."""

    def parts() -> Any:
        state = app.state.server
        if state is None:
            raise ServiceError(503, "starting", "the server is still starting")
        return state

    limits = Limits.from_settings(settings)
    backend = LocalBackend(parts, lambda: parts().resources, limits, served_by="sidecar")
    server = build_server(backend, limits)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1", "localhost", "127.0.0.1:*", "localhost:*"],
        allowed_origins=list(settings.server_cors_origins),
    )
    server.streamable_http_app(  # builds the SDK's request manager with these settings
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
        max_request_body_size=settings.server_max_body_bytes,
    )
    manager = server.session_manager
    app.add_route(PATH, TokenGate(StreamableHTTPASGIApp(manager), app), include_in_schema=False)
    return manager.run()


async def _error(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    body: dict[str, object],
    headers: dict[str, str],
) -> None:
    """The HTTP API's error shape (`ErrorBody`: `detail`, `code`, `message`), so a client of
    both sees one kind of refusal; the mount sits below the API and never imports it."""
    await JSONResponse({"detail": None, **body}, status, headers)(scope, receive, send)
