"""The tools through a running sidecar: `vault-rag mcp` forwards each call to the `/mcp` of the
`vault-rag serve` that serves the same vault, with the data dir's token, so it opens no index
and loads no model. The sidecar's answer (result, tool error or protocol error) goes back as
it came."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextResourceContents

from vault_rag.mcp_server import models as m
from vault_rag.mcp_server.limits import note_uri

TIMEOUT = httpx2.Timeout(30.0, read=600.0)  # an answer with a slow local model takes minutes


class RemoteBackend:
    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/") + "/mcp"
        self.token = token
        self.client: Client | None = None

    async def open(self, stack: AsyncExitStack) -> None:
        # No proxy from the environment: the token only ever goes to 127.0.0.1.
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=TIMEOUT,
                trust_env=False,
            )
        )
        transport = streamable_http_client(self.url, http_client=http)
        self.client = await stack.enter_async_context(Client(transport, cache=None))

    def _client(self) -> Client:
        if self.client is None:
            raise RuntimeError("the sidecar connection is not open")
        return self.client

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return await self._client().call_tool(name, arguments)

    async def list_note_page(self, cursor: str | None) -> tuple[list[m.NoteListEntry], str | None]:
        page = await self._client().list_resources(cursor=cursor)
        entries = [
            m.NoteListEntry(
                path=r.name, title=r.title or r.name, modified="", size=r.size or 0, uri=r.uri
            )
            for r in page.resources
        ]
        return entries, page.next_cursor

    async def read_note_resource(self, path: str) -> str:
        result = await self._client().read_resource(note_uri(path))
        return "".join(c.text for c in result.contents if isinstance(c, TextResourceContents))
