"""The tools through a running sidecar: `vault-rag mcp` forwards each call to the `/mcp` of the
`vault-rag serve` that serves the same vault, with the data dir's token, so it opens no index
and loads no model. The sidecar's answer (result, tool error or protocol error) goes back as
it came."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextResourceContents

from vault_rag.mcp_server import models as m
from vault_rag.mcp_server.limits import note_uri

PROTOCOL = "2026-07-28"  # the sidecar runs the same SDK: no discover probe per request
TIMEOUT = httpx2.Timeout(30.0, read=600.0)  # an answer with a slow local model takes minutes


class RemoteBackend:
    """Each request in a client of its own (the protocol is stateless, so that costs one local
    HTTP request): a sidecar that stops fails that request, not the whole stdio server."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/") + "/mcp"
        self.token = token
        self.http: httpx2.AsyncClient | None = None

    async def open(self, stack: AsyncExitStack) -> None:
        # No proxy from the environment: the token only ever goes to 127.0.0.1.
        self.http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=TIMEOUT,
                trust_env=False,
            )
        )
        async with self._client() as client:  # the sidecar answers, with this token
            await client.list_tools()

    def _client(self) -> Client:
        if self.http is None:
            raise RuntimeError("the sidecar connection is not open")
        transport = streamable_http_client(self.url, http_client=self.http)
        return Client(transport, mode=PROTOCOL, cache=None)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        async with unwrapped(), self._client() as client:
            return await client.call_tool(name, arguments)

    async def list_note_page(self, cursor: str | None) -> tuple[list[m.NoteListEntry], str | None]:
        async with unwrapped(), self._client() as client:
            page = await client.list_resources(cursor=cursor)
        entries = [
            m.NoteListEntry(
                path=r.name, title=r.title or r.name, modified="", size=r.size or 0, uri=r.uri
            )
            for r in page.resources
        ]
        return entries, page.next_cursor

    async def read_note_resource(self, path: str) -> str:
        async with unwrapped(), self._client() as client:
            result = await client.read_resource(note_uri(path))
        return "".join(c.text for c in result.contents if isinstance(c, TextResourceContents))


@asynccontextmanager
async def unwrapped() -> AsyncIterator[None]:
    """The sidecar's protocol error (`MCPError`) as itself, not inside the client's task
    group's `ExceptionGroup`; anything else (a transport failure) as `SidecarLost`."""
    try:
        yield
    except MCPError:
        raise
    except Exception as exc:
        errors = exc.exceptions if isinstance(exc, BaseExceptionGroup) else (exc,)
        while len(errors) == 1 and isinstance(errors[0], BaseExceptionGroup):
            errors = errors[0].exceptions
        if len(errors) == 1 and isinstance(errors[0], MCPError):
            raise errors[0] from None
        raise SidecarLost(f"{type(errors[0]).__name__}: {errors[0]}") from exc


class SidecarLost(ConnectionError):
    """The sidecar did not answer (stopped, restarted elsewhere, refused the connection)."""
