"""The vault's MCP server (the official `mcp` SDK's `MCPServer`, spec 2026-07-28): six tools
and the notes as resources, over any backend (`local.LocalBackend` on an open index,
`remote.RemoteBackend` through a running sidecar's `/mcp`).

Tools (each with its input schema, an output schema and readable text):
`search_notes`, `ask_vault`, `read_note`, `related_notes`, `list_notes`, `vault_status`.
Resources: every indexed note as `vault-rag://note/<path>` (each path segment
percent-encoded), listed a page (`mcp_page_size`) at a time with a cursor; `text/markdown`,
embeds resolved. No tool or resource writes to the vault.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations, and the
# `k` field is a local of `build_server`.
from typing import Annotated, Any, Literal, Protocol

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import (
    CallToolResult,
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
    ToolAnnotations,
)
from pydantic import Field

from vault_rag import __version__
from vault_rag.mcp_server import models as m
from vault_rag.mcp_server.limits import URI_TEMPLATE, Limits
from vault_rag.services.errors import ServiceError

INSTRUCTIONS = """Search and read an Obsidian vault's notes (the person's own knowledge).
search_notes finds passages, each with a [[note#heading]] link to cite; read_note reads a
note with its ![[embeds]] resolved; ask_vault answers a question with cited passages. Cite
notes with the links given. Excluded folders are never served."""

# As `collections` of `/v1/search` and `/v1/ask`: which indexes are searched.
COLLECTIONS = Field(
    description="Which collections to search: 'vault' and the sources' names (`vault-rag "
    "sources list`); default: every one (or the vault alone, by the default_collections "
    "setting)",
)

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class Backend(Protocol):
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult: ...

    async def list_note_page(
        self, cursor: str | None
    ) -> tuple[list[m.NoteListEntry], str | None]: ...

    async def read_note_resource(self, path: str) -> str: ...


class VaultMCPServer(MCPServer[Any]):
    """`MCPServer` whose `resources/list` pages through the vault's notes (the SDK's own lists
    every registered resource at once)."""

    def __init__(self, backend: Backend, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backend = backend

    async def _handle_list_resources(
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        entries, next_cursor = await self.backend.list_note_page(params.cursor if params else None)
        resources = [
            Resource(uri=e.uri, name=e.path, title=e.title, mime_type="text/markdown", size=e.size)
            for e in entries
        ]
        return ListResourcesResult(resources=resources, next_cursor=next_cursor)


def _args(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def build_server(backend: Backend, limits: Limits, **kwargs: Any) -> VaultMCPServer:
    """The server with its tools and resources; `kwargs` go to `MCPServer` (e.g. `lifespan`)."""
    server = VaultMCPServer(
        backend,
        name="vault-rag",
        title="Vault RAG",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        **kwargs,
    )
    k_field = Field(
        ge=1,
        json_schema_extra={"maximum": limits.max_k},
        description=f"How many results, at most {limits.max_k}",
    )

    @server.tool(annotations=READ_ONLY, title="Search the vault")
    async def search_notes(
        query: Annotated[str, Field(description="What to look for, in any language")],
        k: Annotated[int, k_field] = 10,
        folder: Annotated[str | None, Field(description="Only notes under this folder")] = None,
        tag: Annotated[str | None, Field(description="Only notes with this tag")] = None,
        collections: Annotated[list[str] | None, COLLECTIONS] = None,
    ) -> Annotated[CallToolResult, m.SearchOutput]:
        """Hybrid search (meaning and words) of the vault's notes, embeds resolved, and of the
        sources beside it (code trees, other vaults). Returns passages best first, each with
        its note, heading, line range, score, collection and a link to cite ([[note#heading]];
        `path:line-line (symbol)` for code)."""
        args = _args(query=query, k=k, folder=folder, tag=tag, collections=collections)
        return await backend.call_tool("search_notes", args)

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, open_world_hint=True
        ),
        title="Ask the vault",
    )
    async def ask_vault(
        question: Annotated[str, Field(description="A question about the vault's topics")],
        mode: Annotated[
            Literal["strict", "hybrid"] | None,
            Field(description="strict: the vault only; hybrid: the web too when it is weak"),
        ] = None,
        collections: Annotated[list[str] | None, COLLECTIONS] = None,
    ) -> Annotated[CallToolResult, m.AskOutput]:
        """Answer a question from the vault with the answer graph: a cited answer, its
        citations and the model usage. Without a configured language model the answer quotes
        the best passages (extractive). The answer is recorded in the sidecar's data dir so
        the person can rate it; nothing is written to the vault."""
        args = _args(question=question, mode=mode, collections=collections)
        return await backend.call_tool("ask_vault", args)

    @server.tool(annotations=READ_ONLY, title="Read a note")
    async def read_note(
        path: Annotated[str, Field(description="Vault-relative path, e.g. Folder/Note.md")],
        resolve_embeds: Annotated[bool, Field(description="Inline ![[embeds]]")] = True,
        start_line: Annotated[int | None, Field(description="First file line, 1-based")] = None,
        end_line: Annotated[int | None, Field(description="Last file line, inclusive")] = None,
    ) -> Annotated[CallToolResult, m.NoteOutput]:
        """A note as the index reads it: embeds resolved (with where each embedded stretch
        comes from), optionally only some of its lines (search results give line ranges).
        Long notes are cut with a marker and `next_start_line`."""
        args = _args(
            path=path, resolve_embeds=resolve_embeds, start_line=start_line, end_line=end_line
        )
        return await backend.call_tool("read_note", args)

    @server.tool(annotations=READ_ONLY, title="Related notes")
    async def related_notes(
        path: Annotated[str, Field(description="Vault-relative path of the note")],
        k: Annotated[int, k_field] = 10,
    ) -> Annotated[CallToolResult, m.RelatedOutput]:
        """The notes closest in meaning to a note, best first, each with its best passage and
        whether the note already links to it."""
        return await backend.call_tool("related_notes", _args(path=path, k=k))

    @server.tool(annotations=READ_ONLY, title="List notes")
    async def list_notes(
        folder: Annotated[str | None, Field(description="Only notes under this folder")] = None,
        tag: Annotated[str | None, Field(description="Only notes with this tag")] = None,
        modified_since: Annotated[
            str | None, Field(description="ISO 8601 date or time; only notes changed since")
        ] = None,
        cursor: Annotated[str | None, Field(description="next_cursor of the last page")] = None,
    ) -> Annotated[CallToolResult, m.NoteListOutput]:
        """The vault's indexed notes by path, a page at a time (`next_cursor` continues)."""
        args = _args(folder=folder, tag=tag, modified_since=modified_since, cursor=cursor)
        return await backend.call_tool("list_notes", args)

    @server.tool(annotations=READ_ONLY, title="Vault status")
    async def vault_status() -> Annotated[CallToolResult, m.StatusOutput]:
        """What the index holds: notes, passages, how many have vectors, the models."""
        return await backend.call_tool("vault_status", {})

    @server.resource(
        URI_TEMPLATE,
        name="note",
        title="A vault note",
        description="A note of the vault, embeds resolved (vault-relative path, each segment "
        "percent-encoded).",
        mime_type="text/markdown",
    )
    async def note(path: str) -> str:
        try:
            return await backend.read_note_resource(path)
        except ServiceError as exc:
            error = ResourceNotFoundError if exc.status in (403, 404) else ResourceError
            raise error(f"{exc.code}: {exc.message}") from exc

    return server
