"""The tools answered in this process, from `services/` on an open index: the backend of `/mcp`
on `vault-rag serve` (the server's own state) and of `vault-rag mcp` when no sidecar runs.

Each tool turns a service's result into its output model (`models.py`) and readable text; a
`ServiceError` (unknown note, unsafe or excluded path, bad input) becomes a tool error with its
message. Nothing here writes to the vault."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import anyio
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from vault_rag.mcp_server import models as m
from vault_rag.mcp_server.limits import Limits, cut, note_uri
from vault_rag.services import notes as note_service
from vault_rag.services.errors import ServiceError
from vault_rag.services.parts import VaultParts
from vault_rag.services.related import related as related_service
from vault_rag.services.search import check_query
from vault_rag.services.search import search as search_service
from vault_rag.services.status import index_summary

Rendered = tuple[BaseModel, str]


def result_of(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def service_error(exc: ServiceError) -> CallToolResult:
    return error_result(f"{exc.code}: {exc.message}")


class LocalBackend:
    """Tool calls and note resources on `parts()` (called each time: the server's state is set
    once its start-up finished). `resources()`: the answer graph's `Resources`."""

    served_by = "in-process"

    def __init__(
        self,
        parts: Callable[[], VaultParts],
        resources: Callable[[], Any],
        limits: Limits,
        served_by: str = "in-process",
    ) -> None:
        self.parts = parts
        self.resources = resources
        self.limits = limits
        self.served_by = served_by

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        try:
            if name == "ask_vault":
                model, text = await self._ask(**arguments)
            else:
                handler = getattr(self, f"_{name}")
                call = functools.partial(handler, **arguments)
                model, text = await anyio.to_thread.run_sync(call)
        except ServiceError as exc:
            return service_error(exc)
        return result_of(model, text)

    # -- the tools (run in a worker thread: the index is synchronous) ---------------------------
    def _search_notes(
        self,
        query: str,
        k: int = 10,
        folder: str | None = None,
        tag: str | None = None,
        collections: list[str] | None = None,
    ) -> Rendered:
        check_query(query, self.limits.max_query_chars)
        outcome = search_service(
            self.parts(),
            query,
            k=k,
            folder=folder,
            tag=tag,
            max_k=self.limits.max_k,
            collections=collections or None,
        )
        out = m.SearchOutput(
            query=query,
            took_ms=outcome.took_ms,
            results=[
                m.Passage(
                    note=r.note_path,
                    heading=r.heading_path,
                    link=cite_of(r),
                    line_start=r.line_start,
                    line_end=r.line_end,
                    score=round(r.score, 4),
                    text=cut(r.text, self.limits.max_passage_chars),
                    origin=r.origin,
                    embedded_in=r.embedded_in,
                    collection=r.collection,
                    kind=r.kind,
                    symbol=r.symbol,
                    url=r.url,
                    title=r.page_title,
                    linked=[
                        m.LinkedPassage(
                            kind=u.kind,
                            collection=u.collection,
                            note=u.note_path,
                            symbol=u.symbol,
                            line_start=u.line_start,
                            line_end=u.line_end,
                            reason=u.reason,
                        )
                        for u in r.linked
                    ],
                )
                for r in outcome.results
            ],
            routing=[
                m.CollectionShare(name=c.name, weight=c.weight, reasons=list(c.reasons))
                for c in outcome.routing.collections
            ]
            if outcome.routing
            else None,
        )
        return out, m.search_text(out)

    def _read_note(
        self,
        path: str,
        resolve_embeds: bool = True,
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> Rendered:
        note = note_service.read_note_text(
            self.parts(),
            path,
            resolve_embeds=resolve_embeds,
            start_line=start_line,
            end_line=end_line,
            max_chars=self.limits.max_note_chars,
        )
        out = m.NoteOutput(
            path=note.path,
            title=note.title,
            text=note.text,
            start_line=note.start_line,
            end_line=note.end_line,
            total_lines=note.total_lines,
            resolved_embeds=note.resolved,
            truncated=note.truncated,
            next_start_line=note.next_start_line,
            embeds=[m.EmbedProvenance(**vars(e)) for e in note.embeds],
            dependencies=note.dependencies,
            tags=note.tags,
            indexed=note.indexed,
            uri=note_uri(note.path),
            warnings=note.warnings,
        )
        return out, m.note_text(out)

    def _related_notes(self, path: str, k: int = 10) -> Rendered:
        result = related_service(self.parts(), path, k, max_k=self.limits.max_k)
        out = m.RelatedOutput(
            path=result.path,
            status=result.status,
            related=[
                m.RelatedNoteOut(
                    note=r.note_path,
                    link=vault_cite(r.note_path, r.anchor),
                    heading=r.heading_path,
                    line_start=r.line_start,
                    line_end=r.line_end,
                    snippet=r.snippet,
                    score=r.score,
                    linked=r.linked,
                )
                for r in result.related
            ],
        )
        return out, m.related_text(out)

    def _list_notes(
        self,
        folder: str | None = None,
        tag: str | None = None,
        modified_since: str | None = None,
        cursor: str | None = None,
    ) -> Rendered:
        page = note_service.list_notes(
            self.parts(),
            folder=folder,
            tag=tag,
            modified_since=modified_since,
            cursor=cursor,
            page_size=self.limits.page_size,
        )
        out = m.NoteListOutput(
            notes=[m.NoteListEntry(**vars(n), uri=note_uri(n.path)) for n in page.notes],
            next_cursor=page.next_cursor,
            total=page.total,
        )
        return out, m.list_text(out)

    def _vault_status(self) -> Rendered:
        out = m.StatusOutput(**index_summary(self.parts()), served_by=self.served_by)
        return out, m.status_text(out)

    def _find_symbol(
        self, name: str, k: int = 10, collections: list[str] | None = None
    ) -> Rendered:
        from vault_rag.services.code_graph import find_symbols

        if k > self.limits.max_k:
            raise ServiceError(422, "invalid_request", f"k must be at most {self.limits.max_k}")
        found, total = find_symbols(self.parts(), name, collections=collections or None, limit=k)
        out = m.FindSymbolOutput(
            query=name, definitions=[_symbol_def(d) for d in found], total=total
        )
        return out, m.find_symbol_text(out)

    def _symbol_relations(
        self,
        relation: str,
        symbol: str | None = None,
        path: str | None = None,
        collection: str | None = None,
        limit: int = 50,
    ) -> Rendered:
        from vault_rag.services.code_graph import symbol_relations

        found = symbol_relations(
            self.parts(), relation, symbol=symbol, path=path, collection=collection, limit=limit
        )
        out = m.SymbolRelationsOutput(
            relation=found.relation,
            subject=_symbol_def(found.subject) if found.subject is not None else None,
            path=found.path,
            relations=[_relation(collection, r) for collection, r in found.items],
            total=found.total,
            truncated=found.truncated,
            other_definitions=[_symbol_def(d) for d in found.other_definitions],
        )
        return out, m.relations_text(out)

    def _note_links(
        self, path: str, other: str | None = None, collection: str = "vault"
    ) -> Rendered:
        from vault_rag.services.code_graph import note_links

        found = note_links(self.parts(), path, other=other, collection=collection)
        out = m.NoteLinksOutput(
            collection=found.collection,
            path=found.path,
            cite=vault_cite(found.path, ""),
            out=[m.NoteLinkOut(note=n, kind=k, cite=vault_cite(n, "")) for n, k in found.out],
            back=[m.NoteLinkOut(note=n, kind=k, cite=vault_cite(n, "")) for n, k in found.back],
            tags=found.tags,
            symbols=[
                m.SymbolMentionOut(name=name, definition=_symbol_def(d), confidence=conf)
                for name, _, d, conf in found.symbols
            ],
            other=found.other,
            shared_out=found.shared_out,
            shared_back=found.shared_back,
            links_between=found.links_between,
        )
        return out, m.note_links_text(out)

    async def _ask(
        self, question: str, mode: str | None = None, collections: list[str] | None = None
    ) -> Rendered:
        from vault_rag.services.ask import ask

        check_query(question, self.limits.max_query_chars)
        resources = await anyio.to_thread.run_sync(self.resources)
        result = await ask(
            resources,
            question,
            mode,  # type: ignore[arg-type]
            collections=collections or None,
        )
        out = m.AskOutput(
            answer=result.answer,
            citations=[_citation(c) for c in result.citations],
            usage=m.AskUsage(
                llm_calls=result.llm_calls,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
            ),
            mode=result.mode,
            extractive=resources.llm is None,
            notes=result.notes,
        )
        return out, m.ask_text(out)

    # -- note resources -------------------------------------------------------------------------
    async def list_note_page(self, cursor: str | None) -> tuple[list[m.NoteListEntry], str | None]:
        call = functools.partial(
            note_service.list_notes, self.parts(), cursor=cursor, page_size=self.limits.page_size
        )
        page = await anyio.to_thread.run_sync(call)
        entries = [m.NoteListEntry(**vars(n), uri=note_uri(n.path)) for n in page.notes]
        return entries, page.next_cursor

    async def read_note_resource(self, path: str) -> str:
        call = functools.partial(
            note_service.read_note_text, self.parts(), path, max_chars=self.limits.max_note_chars
        )
        return (await anyio.to_thread.run_sync(call)).text


def vault_cite(note_path: str, anchor: str) -> str:
    from vault_rag.graph.sources import vault_cite as cite  # the answer graph's own links

    return cite(note_path, anchor)


def cite_of(result: Any) -> str:
    """A hit's link as answers cite it: `[[note#heading]]`, `path:line-line (symbol)` for code,
    the URL for a web source's page."""
    from vault_rag.graph.sources import cite_of as cite

    return cite(result)


def _citation(c: dict[str, Any]) -> m.Citation:
    if c.get("kind") == "web":
        return m.Citation(kind="web", cite=c["cite"], url=c.get("url"), title=c.get("title"))
    return m.Citation(
        kind="vault",
        cite=c["cite"],
        note=c.get("note_path"),
        heading=c.get("heading"),
        line_start=c.get("line_start"),
        line_end=c.get("line_end"),
    )


def code_cite(path: str, line_start: int, line_end: int, symbol: str | None) -> str:
    """As a code hit is cited (`graph/sources.code_cite`): `path:line-line (symbol)`."""
    where = f"{path}:{line_start}-{line_end}"
    return f"{where} ({symbol})" if symbol else where


def _symbol_def(d: Any) -> m.SymbolDef:
    return m.SymbolDef(
        collection=d.collection,
        path=d.path,
        symbol=d.symbol,
        kind=d.kind,
        line_start=d.line_start,
        line_end=d.line_end,
        cite=code_cite(d.path, d.line_start, d.line_end, d.symbol),
    )


def _relation(collection: str, r: Any) -> m.RelationOut:
    if r.path is None:
        cite = None
    elif r.kind == "note":
        cite = vault_cite(r.path, "")
    elif r.kind == "file":
        cite = r.path if r.symbol is None else code_cite(r.path, r.at_line, r.at_line, r.symbol)
    else:
        cite = code_cite(r.path, r.line_start, r.line_end, r.symbol)
    return m.RelationOut(
        relation=r.relation,
        collection=collection,
        path=r.path,
        symbol=r.symbol,
        kind=r.kind,
        line_start=r.line_start,
        line_end=r.line_end,
        confidence=r.confidence,
        why=r.why,
        name=r.name,
        at_line=r.at_line,
        count=r.count,
        cite=cite,
    )
