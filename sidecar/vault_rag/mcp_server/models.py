"""What the MCP tools return: one Pydantic model per tool (its `outputSchema` and the
`structuredContent` of each answer), and the readable text sent beside it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class LinkedPassage(BaseModel):
    kind: str = Field(description="code: the symbol the note names; note: a note naming it")
    collection: str = Field(description="'vault' or the source it comes from")
    note: str = Field(description="The linked file: a note, or a source file")
    symbol: str | None = Field(None, description="The code symbol named (qualified)")
    line_start: int
    line_end: int
    reason: str = Field(description="Why, e.g. 'note names DBImpl::Write'")


class Passage(BaseModel):
    note: str = Field(description="The note holding the passage, vault-relative")
    heading: str = Field(description="Heading path of the passage ('' at the top of the note)")
    link: str = Field(
        description="How to cite it: [[note#heading]], path:line-line (symbol) for code, or the "
        "URL for a web source's page"
    )
    line_start: int = Field(description="First line of the passage in the note, 1-based")
    line_end: int
    score: float = Field(description="Fused rank score; compare only within one answer")
    text: str = Field(description="The passage (cut at the mcp_max_passage_chars setting)")
    origin: str = Field(description="The note the text was written in (an embed's source)")
    embedded_in: list[str] = Field(default_factory=list, description="Other notes showing it")
    collection: str = Field("vault", description="'vault' or the source it comes from")
    kind: str = Field("md", description="md, pdf, canvas or code")
    symbol: str | None = Field(None, description="A code unit's symbol, e.g. AMyActor::Tick")
    url: str | None = Field(
        None, description="A web source's page: its URL (with #anchor), which `link` is too"
    )
    title: str | None = Field(None, description="A web source's page: its title")
    linked: list[LinkedPassage] = Field(
        default_factory=list,
        description="Note <-> code links when a code source is searched (at most 3)",
    )


class CollectionShare(BaseModel):
    name: str = Field(description="'vault' or a source's name")
    weight: float = Field(
        description="Its share of the merged list: 2 fills two places for each one of a "
        "weight-1 collection; 1 means no evidence for it"
    )
    reasons: list[str] = Field(description="Why its weight was raised, e.g. 'code words'")


class SearchOutput(BaseModel):
    query: str
    results: list[Passage]
    took_ms: float
    routing: list[CollectionShare] | None = Field(
        None,
        description="With more than one collection searched: how much each "
        "contributed to the results and why (null with one collection)",
    )


class Citation(BaseModel):
    kind: str = Field(description="vault or web")
    cite: str = Field(description="[[note#heading]] for a vault passage, the URL for a page")
    note: str | None = None
    heading: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    url: str | None = None
    title: str | None = None


class AskUsage(BaseModel):
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int


class AskOutput(BaseModel):
    answer: str = Field(description="Markdown; [n] marks cite the citations in order")
    citations: list[Citation]
    usage: AskUsage
    mode: str = Field(description="strict (vault only) or hybrid (vault and web)")
    extractive: bool = Field(description="No language model: the answer quotes passages")
    notes: list[str] = Field(default_factory=list, description="What the answer could not do")


class EmbedProvenance(BaseModel):
    note: str = Field(description="The note this stretch of text was written in")
    origin_line: int = Field(description="Its line in that note")
    host_line: int = Field(description="The line of the ![[embed]] in the note read")
    chars: int


class NoteOutput(BaseModel):
    path: str
    title: str
    text: str
    start_line: int
    end_line: int
    total_lines: int
    resolved_embeds: bool
    truncated: bool = Field(description="Cut at the mcp_max_note_chars setting")
    next_start_line: int | None = Field(None, description="Read on from here when truncated")
    embeds: list[EmbedProvenance] = Field(default_factory=list)
    dependencies: list[str] = Field(default_factory=list, description="Notes embedded")
    tags: list[str] = Field(default_factory=list)
    indexed: bool
    uri: str = Field(description="The note as an MCP resource")
    warnings: list[str] = Field(default_factory=list)


class RelatedNoteOut(BaseModel):
    note: str
    link: str
    heading: str
    line_start: int
    line_end: int
    snippet: str
    score: float = Field(description="Cosine similarity of the closest pair of passages")
    linked: bool = Field(description="The note already links to it")


class RelatedOutput(BaseModel):
    path: str
    status: str = Field(description="ok, pending (no vectors yet) or not_indexed")
    related: list[RelatedNoteOut]


class NoteListEntry(BaseModel):
    path: str
    title: str
    modified: str = Field(description="ISO 8601, UTC")
    size: int
    uri: str


class NoteListOutput(BaseModel):
    notes: list[NoteListEntry]
    next_cursor: str | None = Field(None, description="Pass as cursor for the next page")
    total: int | None = Field(None, description="Notes matching (not counted with a tag)")


class StatusOutput(BaseModel):
    vault: str
    notes: int
    chunks: int
    embedded: int
    pending: int
    warnings: int
    embedding_model: str
    index_model: str | None
    vector_store: str
    vector_store_reachable: bool
    last_run: str | None
    excluded_folders: int
    served_by: str = Field(description="sidecar (a running vault-rag serve) or in-process")


def search_text(out: SearchOutput) -> str:
    if not out.results:
        return f"No passages found for {out.query!r}."
    parts = [f"{len(out.results)} passages for {out.query!r}:"]
    for i, p in enumerate(out.results, 1):
        where = "" if p.collection == "vault" else f", from {p.collection}"
        parts.append(
            f"\n[{i}] {p.link} (lines {p.line_start}-{p.line_end}, score {p.score:.3f}{where})"
        )
        parts.append(p.text)
        for u in p.linked:
            lines = f":{u.line_start}-{u.line_end} {u.symbol}" if u.kind == "code" else ""
            where = u.note + lines
            parts.append(f"  ↔ {u.kind}: {where} ({u.reason})")
    if out.routing:
        shares = ", ".join(f"{c.name} ×{c.weight:g}" for c in out.routing)
        parts.append(f"\n(searched: {shares})")
    return "\n".join(parts)


def ask_text(out: AskOutput) -> str:
    lines = [out.answer.rstrip(), ""]
    lines += [f"[{i}] {c.cite}" for i, c in enumerate(out.citations, 1)]
    lines += [f"note: {n}" for n in out.notes]
    return "\n".join(lines).strip()


def note_text(out: NoteOutput) -> str:
    head = f"{out.path} (lines {out.start_line}-{out.end_line} of {out.total_lines})"
    return f"{head}\n\n{out.text}"


def related_text(out: RelatedOutput) -> str:
    if not out.related:
        return f"No related notes for {out.path} ({out.status})."
    rows = [
        f"- {r.link} ({r.score:.3f}{', linked' if r.linked else ''}): {r.snippet}"
        for r in out.related
    ]
    return f"Notes related to {out.path}:\n" + "\n".join(rows)


def list_text(out: NoteListOutput) -> str:
    rows = [f"- {n.path} (modified {n.modified})" for n in out.notes]
    more = f"\nmore: cursor={out.next_cursor}" if out.next_cursor else ""
    return f"{len(out.notes)} notes:\n" + "\n".join(rows) + more


def status_text(out: StatusOutput) -> str:
    data: dict[str, Any] = out.model_dump()
    return "\n".join(f"{k}: {v}" for k, v in data.items())


# -- the code and note graph (issue 43) ------------------------------------------------------
class SymbolDef(BaseModel):
    collection: str = Field(description="The code source holding it")
    path: str = Field(description="Its file, relative to the source's folder")
    symbol: str = Field(description="Its qualified name, e.g. eng::Actor::Tick")
    kind: str = Field(description="function, class, struct, enum, interface, …")
    line_start: int
    line_end: int
    cite: str = Field(description="How to cite it: path:line-line (symbol)")


class FindSymbolOutput(BaseModel):
    query: str
    definitions: list[SymbolDef]
    total: int = Field(description="Definitions found (more than listed when over k)")


class RelationOut(BaseModel):
    relation: str = Field(description="callers, callees, bases, derived, contains, …, notes")
    collection: str = Field(description="The collection of the related item")
    path: str | None = Field(description="Its file or note; None: defined nowhere here")
    symbol: str | None = Field(None, description="Its qualified name (None for a file or note)")
    kind: str = Field(description="function, class, …, file, note, or external")
    line_start: int
    line_end: int
    confidence: float = Field(description="0-1: how sure the name means this definition")
    why: str = Field(description="How it was resolved: same class, same file, ambiguous, …")
    name: str = Field("", description="The name as written where the relation is")
    at_line: int = Field(0, description="The line of the call, base list or include")
    count: int = Field(1, description="Calls of that name there")
    cite: str | None = Field(None, description="path:line-line (symbol), or [[note]]")


class SymbolRelationsOutput(BaseModel):
    relation: str
    subject: SymbolDef | None = Field(description="The definition asked about (None: a file)")
    path: str = Field(description="The subject's file")
    relations: list[RelationOut] = Field(description="Best first (confidence, then count)")
    total: int = Field(description="Relations found (more than listed when over limit)")
    truncated: bool = Field(description="More edges than read: a very common name")
    other_definitions: list[SymbolDef] = Field(
        default_factory=list, description="Other definitions of the name (pass path to choose)"
    )


class NoteLinkOut(BaseModel):
    note: str
    kind: str = Field(description="link, embed or canvas (an edge of a canvas)")
    cite: str


class SymbolMentionOut(BaseModel):
    name: str = Field(description="The name as the note writes it")
    definition: SymbolDef
    confidence: float


class NoteLinksOutput(BaseModel):
    collection: str
    path: str
    cite: str
    out: list[NoteLinkOut] = Field(description="Notes this note links to, embeds, or joins")
    back: list[NoteLinkOut] = Field(description="Notes linking to, embedding or joining it")
    tags: list[str]
    symbols: list[SymbolMentionOut] = Field(description="Code symbols the note names")
    other: str | None = Field(None, description="The second note, when asked")
    shared_out: list[str] = Field(default_factory=list, description="Linked from both")
    shared_back: list[str] = Field(default_factory=list, description="Linking to both")
    links_between: list[str] = Field(default_factory=list, description="a → b, b → a")


def find_symbol_text(out: FindSymbolOutput) -> str:
    if not out.definitions:
        return f"No definition of {out.query!r} in the code sources."
    rows = [f"- {d.cite} [{d.kind}, {d.collection}]" for d in out.definitions]
    return f"{out.total} definitions of {out.query!r}:\n" + "\n".join(rows)


def relations_text(out: SymbolRelationsOutput) -> str:
    subject = out.subject.cite if out.subject is not None else out.path
    if not out.relations:
        return f"No {out.relation} of {subject}."
    rows = [
        f"- {r.cite or r.name} (confidence {r.confidence:.2f}, {r.why}"
        + (f", {r.count} calls" if r.count > 1 else "")
        + ")"
        for r in out.relations
    ]
    more = f" (first {len(out.relations)} of {out.total})" if out.total > len(out.relations) else ""
    return f"{out.relation} of {subject}{more}:\n" + "\n".join(rows)


def note_links_text(out: NoteLinksOutput) -> str:
    lines = [f"{out.cite}: links out {len(out.out)}, backlinks {len(out.back)}"]
    lines += [f"- out ({o.kind}): {o.cite}" for o in out.out]
    lines += [f"- back ({b.kind}): {b.cite}" for b in out.back]
    lines += [f"- tag: #{t}" for t in out.tags]
    lines += [f"- names {s.name}: {s.definition.cite} ({s.confidence:.2f})" for s in out.symbols]
    if out.other is not None:
        lines.append(f"shared with {out.other}: out {out.shared_out}, back {out.shared_back}")
        lines += [f"- {pair}" for pair in out.links_between]
    return "\n".join(lines)
