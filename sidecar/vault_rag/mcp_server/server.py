"""The vault's MCP server (the official `mcp` SDK's `MCPServer`, spec 2026-07-28): nine tools
and the notes as resources, over any backend (`local.LocalBackend` on an open index,
`remote.RemoteBackend` through a running sidecar's `/mcp`).

Tools (each with its input schema, an output schema and readable text):
`search_notes`, `ask_vault`, `read_note`, `related_notes`, `list_notes`, `vault_status`, and
the code and note graph's `find_symbol`, `symbol_relations`, `note_links` (issue 43).
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
note with its ![[embeds]] resolved; ask_vault answers a question with cited passages.
find_symbol, symbol_relations (callers, callees, bases, derived, includes, notes naming it)
and note_links (links, backlinks, tags, code it names) follow the code and note graph. Cite
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

    @server.tool(annotations=READ_ONLY, title="Find a code symbol")
    async def find_symbol(
        name: Annotated[
            str,
            Field(description="A function, method or class: Tick, AActor::Tick, pkg.mod.Class"),
        ],
        k: Annotated[int, k_field] = 10,
        collections: Annotated[
            list[str] | None, Field(description="Code sources to look in; default: every one")
        ] = None,
    ) -> Annotated[CallToolResult, m.FindSymbolOutput]:
        """Where a symbol is defined in the code sources beside the vault: each definition's
        file, lines, kind and a citation (path:line-line (symbol)). A qualified name narrows
        it (A::f, ns::A::f, pkg.mod.f); a plain one lists every definition of that name."""
        return await backend.call_tool(
            "find_symbol", _args(name=name, k=k, collections=collections)
        )

    @server.tool(annotations=READ_ONLY, title="A symbol's relations")
    async def symbol_relations(
        relation: Annotated[
            Literal[
                "callers",
                "callees",
                "bases",
                "derived",
                "contains",
                "contained_by",
                "includes",
                "included_by",
                "notes",
            ],
            Field(
                description="callers/callees (calls), bases/derived (inheritance), contains/"
                "contained_by (class and members), includes/included_by (#include, import; of "
                "the symbol's file or of `path`), notes (vault notes naming the symbol)"
            ),
        ],
        symbol: Annotated[
            str | None, Field(description="The symbol, as for find_symbol (e.g. AActor::Tick)")
        ] = None,
        path: Annotated[
            str | None,
            Field(description="Its file (chooses among definitions); alone: the file's relations"),
        ] = None,
        collection: Annotated[str | None, Field(description="The code source")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="How many relations, at most")] = 50,
    ) -> Annotated[CallToolResult, m.SymbolRelationsOutput]:
        """A code symbol's relations from the sources' tree-sitter parse, best first, each
        with a confidence: calls are resolved by name (same class, base class, same file,
        qualified, unique, or ambiguous across files, lower), so read a low confidence as
        "maybe". Each relation cites its definition (path:line-line (symbol)) or note."""
        args = _args(
            relation=relation, symbol=symbol, path=path, collection=collection, limit=limit
        )
        return await backend.call_tool("symbol_relations", args)

    @server.tool(annotations=READ_ONLY, title="A note's links")
    async def note_links(
        path: Annotated[str, Field(description="Vault-relative path, e.g. Folder/Note.md")],
        other: Annotated[str | None, Field(description="A second note: what the two share")] = None,
        collection: Annotated[
            str, Field(description="'vault' or a source that is a vault or Markdown folder")
        ] = "vault",
    ) -> Annotated[CallToolResult, m.NoteLinksOutput]:
        """A note's links out (links, embeds, canvas edges), its backlinks, its tags and the
        code symbols it names (each with its definition and a confidence); with `other`, the
        notes both link to, the notes linking to both, and links between the two."""
        args = _args(path=path, other=other, collection=collection)
        return await backend.call_tool("note_links", args)

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
