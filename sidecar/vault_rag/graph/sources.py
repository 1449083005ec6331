"""Evidence documents and citations: how a chunk or a web page becomes a `Doc`, how the model
sees it, how the answer cites it (``[[note#heading]]`` or the URL) and which documents an
answer actually cited."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from vault_rag.graph.state import Doc
from vault_rag.graph.web import WebPage
from vault_rag.retrieval.hybrid import SearchResult

_WIKILINK_RE = re.compile(r"\[\[([^\[\]|]+?)(?:\|[^\[\]]*)?\]\]")
# In a link's subpath `#` starts a nested heading, `|` the alias, `^` a block id and `[` `]` end
# the link; Obsidian compares headings with these read as spaces, so the link still finds them.
_SUBPATH_BREAKERS = re.compile(r"[#|^\[\]]")
_SPACES = re.compile(r"\s+")


def note_link_target(note_path: str) -> str:
    return note_path[:-3] if note_path.lower().endswith(".md") else note_path


def link_subpath(anchor: str) -> str:
    """A heading as a link subpath (`C# interop` → `C interop`); a `^block` id as it is."""
    if anchor.startswith("^"):
        return anchor
    return _SPACES.sub(" ", _SUBPATH_BREAKERS.sub(" ", anchor)).strip()


def vault_cite(note_path: str, anchor: str) -> str:
    target = note_link_target(note_path)
    subpath = link_subpath(anchor)
    return f"[[{target}#{subpath}]]" if subpath else f"[[{target}]]"


def doc_from_result(result: SearchResult, aspect: int, rank: int = 0) -> Doc:
    """`result`, found for `aspect` at place `rank` of its search's list."""
    doc = Doc(
        id=result.chunk_id,
        kind="vault",
        aspects=[aspect],
        text=result.text,  # what was matched; extractive answers quote it (the citation holds it)
        context=result.context or result.text,  # small-to-big: what the model reads
        score=result.score,
        rank=rank,
        dense_score=result.dense_score,
        lexical_score=result.lexical_score,
        grade=None,
        cite=cite_of(result),
        note_path=result.note_path,
        heading=result.heading_path,
        anchor=result.anchor,
        chunk_id=result.chunk_id,
        origin=result.origin,
        line_start=result.line_start,
        line_end=result.line_end,
        embedded_in=list(result.embedded_in),
        also=[],
        collection=result.collection,
        symbol=result.symbol or "",
        source_kind=result.kind,
        related_file=result.related_file or "",
        declared_at=result.declared_at or "",
    )
    if result.linked:  # a pair question's note ↔ code links (`citation_of` carries them)
        doc["linked"] = [asdict(unit) for unit in result.linked]
    if result.url:  # a web source's page: cited by its URL (`citation_of`)
        doc["url"] = result.url
        doc["title"] = result.page_title or ""
    return doc


def cite_of(result: SearchResult) -> str:
    """How an answer cites a hit: `[[note#heading]]`, `path:line-line (symbol)` for code, the
    URL for a web source's page."""
    if result.url:
        return result.url
    return (
        code_cite(result) if result.kind == "code" else vault_cite(result.note_path, result.anchor)
    )


def code_cite(result: SearchResult) -> str:
    """A code unit's citation: `path:line-line`, then its symbol (`AMyActor::BeginPlay`)."""
    where = f"{result.note_path}:{result.line_start}-{result.line_end}"
    return f"{where} ({result.symbol})" if result.symbol else where


def doc_from_page(page: WebPage, aspect: int) -> Doc:
    return Doc(
        id=page.id,
        kind="web",
        aspects=[aspect],
        text=page.text,
        score=page.score,
        dense_score=None,
        grade=None,
        cite=page.url,
        url=page.url,
        title=page.title,
        also=[],
    )


def citation_of(doc: Doc) -> dict[str, Any]:
    """The citation record the CLI's JSON and the HTTP API report for one document."""
    if doc.get("kind") == "vault" and doc.get("url"):
        # A web source's page: cited (and opened) by its URL, like a web search result, with
        # the source's name, the section and the passage.
        return {
            "kind": "web",
            "url": doc["url"],
            "title": doc.get("title", ""),
            "cite": doc["cite"],
            "doc_id": doc["id"],
            "collection": doc.get("collection", "vault"),
            "source_kind": doc.get("source_kind") or "web",
            "heading": doc.get("heading", ""),
            "chunk_id": doc["chunk_id"],
            "text": doc.get("text", ""),
        }
    if doc.get("kind") == "web":
        return {
            "kind": "web",
            "url": doc["url"],
            "title": doc.get("title", ""),
            "cite": doc["cite"],
            "doc_id": doc["id"],
        }
    record = {
        "kind": "vault",
        "note_path": doc["note_path"],
        "heading": doc.get("heading", ""),
        "anchor": doc.get("anchor", ""),
        "chunk_id": doc["chunk_id"],
        "origin": doc.get("origin", doc["note_path"]),
        "line_start": doc.get("line_start"),
        "line_end": doc.get("line_end"),
        "embedded_in": list(doc.get("embedded_in", [])),
        "cite": doc["cite"],
        "collection": doc.get("collection", "vault"),
        "symbol": doc.get("symbol") or None,
    }
    if doc.get("linked"):  # the pane shows the pair under the citation
        record["linked"] = list(doc["linked"])
    if doc.get("source_kind") == "code":
        # A code source's files are outside the vault: the pane shows the cited lines itself
        # (`text`, the unit verbatim) instead of opening the file.
        record.update(
            source_kind="code",
            text=doc.get("text", ""),
            related_file=doc.get("related_file") or None,
            declared_at=doc.get("declared_at") or None,
        )
    elif doc.get("collection", "vault") != "vault":
        # Another vault or a docs folder: not a file of the vault Obsidian has open either, so
        # the pane shows the cited passage (`text`) instead of opening a note of that name.
        record.update(source_kind=doc.get("source_kind") or "md", text=doc.get("text", ""))
    return record


def format_evidence(docs: list[Doc], limit: int | None = None) -> str:
    """The documents as the model sees them: a number, the citation to copy, the text (for a
    vault unit its enclosing section, small-to-big; the citation stays the unit's)."""
    blocks = []
    for number, doc in enumerate(docs, 1):
        body = doc.get("context") or doc["text"]
        text = body if limit is None else _clip(body, limit)
        title = f" ({doc['title']})" if doc.get("kind") == "web" and doc.get("title") else ""
        blocks.append(f"[{number}] cite as: {doc['cite']}{title}\n{text}")
    return "\n\n".join(blocks)


def cited_docs(answer: str, docs: list[Doc]) -> list[Doc]:
    """The documents an answer cites, in order of first citation. A wikilink matches by full
    path or by note name (Obsidian's shortest form), with or without the heading."""
    found: list[tuple[int, int, Doc]] = []
    for order, doc in enumerate(docs):
        position = _first_citation(answer, doc)
        if position is not None:
            found.append((position, order, doc))
    return [doc for _, _, doc in sorted(found, key=lambda item: (item[0], item[1]))]


def collect_citations(
    answer: str, docs: list[Doc], quoted: list[Doc] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Citation records for an answer: the documents it quoted verbatim (`quoted`, known
    exactly), then those whose citation appears in its text (`docs`, the evidence the model
    wrote from), each with the near-duplicates merged into it. When nothing is cited at all,
    every document in `docs` is listed; the flag says whether the answer really cited."""
    quoted = quoted or []
    cited = quoted + [d for d in cited_docs(answer, docs) if d not in quoted]
    chosen = cited or docs
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for doc in chosen:
        for record in [citation_of(doc), *doc.get("also", [])]:
            key = record.get("chunk_id") or record.get("url") or ""
            if key and key not in seen:
                seen.add(key)
                records.append(record)
    return records, bool(cited)


def _first_citation(answer: str, doc: Doc) -> int | None:
    if doc.get("kind") == "web":
        position = answer.find(doc["url"])
        return position if position >= 0 else None
    if not doc["cite"].startswith("[["):
        position = answer.find(doc["cite"].split(" (", 1)[0])  # code: `path:line-line`
        return position if position >= 0 else None
    full = note_link_target(doc["note_path"]).casefold()
    name = full.rsplit("/", 1)[-1]
    anchor = (doc.get("anchor") or "").casefold()
    linked = link_subpath(anchor)  # how `vault_cite` wrote a heading with `#` in it
    for match in _WIKILINK_RE.finditer(answer):
        target, _, heading = match.group(1).strip().partition("#")
        target = target.strip().casefold()
        if target.endswith(".md"):
            target = target[:-3]
        if target not in (full, name):
            continue
        # `[[note#A#B]]` names a heading path: compare its last part to the anchor.
        last = heading.split("#")[-1].strip().casefold()
        if not last or not anchor or last in (anchor, linked):
            return match.start()
    return None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
