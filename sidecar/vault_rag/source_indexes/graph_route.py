"""The graph route, its half that reads the graphs: for a relational question
(`retrieval/graph_route.graph_ask`) about a name the symbol table knows, the units of the
related definitions (callers, callees, bases, derived classes, includers, included files) or
of the notes naming the symbol, each with why it was added.

Only the code sources a search covers are asked; with none, `route_for` is None and the
search is exactly what it was. A file the source's own rules now leave out (include/exclude,
`.gitignore`) is never served, as subject or as related (the rule `services/code_graph.py`
applies); a vault note is served only when the search that fuses it shows that note.
One hop, each relation read once: call cycles and recursion cannot loop."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from vault_rag.chunking.types import Chunk
from vault_rag.graph_store.code import Related, find_symbol, relations
from vault_rag.graph_store.mentions import notes_naming
from vault_rag.graph_store.notes import note_graph
from vault_rag.graph_store.store import GraphStore, SymbolRow
from vault_rag.graph_store.sync import open_graph
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.graph_route import FILE_ASKS, GraphAsk, GraphRoute, graph_ask, reason
from vault_rag.retrieval.hybrid import SearchResult, unit_result
from vault_rag.settings import Settings
from vault_rag.source_indexes.specs import VAULT, SourceSpec, all_specs, kept_by

MAX_HITS = 20  # related units per question, best first
MAX_DEFINITIONS = 3  # definitions of an ambiguous name asked about
NOTE_KINDS = ("vault", "markdown")  # sources whose notes may name a symbol
Hit = tuple[float, SearchResult]  # (the relation's confidence, the unit)


def route_for(
    settings: Settings, data_dir: Path, indexes: Mapping[str, VaultIndex]
) -> GraphRoute | None:
    """The route over the code sources among `indexes`; None when there is none."""
    specs = {s.name: s for s in all_specs(settings, data_dir) if s.kind == "code"}
    code = {name: specs[name] for name in indexes if name in specs}
    if not code:
        return None
    kinds = {s.name: s.kind for s in all_specs(settings, data_dir)}
    notes = {n: i for n, i in indexes.items() if n == VAULT or kinds.get(n) in NOTE_KINDS}

    def route(question: str) -> list[SearchResult]:
        ask = graph_ask(question)
        if ask is None:
            return []
        hits: list[Hit] = []
        for name, spec in code.items():
            hits += _hits(settings, name, spec, indexes[name], notes, ask)
        hits.sort(key=lambda h: -h[0])  # stable: each source's order kept
        return [hit for _, hit in hits[:MAX_HITS]]

    return route


def _hits(
    settings: Settings,
    name: str,
    spec: SourceSpec,
    index: VaultIndex,
    notes: Mapping[str, VaultIndex],
    ask: GraphAsk,
) -> list[Hit]:
    allowed = kept_by(spec, index.vault_root)
    store = open_graph(index, settings.max_code_kb)
    try:
        if ask.relation in FILE_ASKS:
            path = _file(store, ask.names, allowed)
            if path is None:
                return []
            found = relations(store, None, ask.relation, path=path, limit=MAX_HITS).items
            return _units(name, index, path, ask.relation, found, allowed)
        subjects = _subjects(store, ask.names, allowed)
        hits: list[Hit] = []
        for row in subjects:
            if ask.relation == "notes":
                hits += _note_units(store, row, notes)
                continue
            found = relations(store, row, ask.relation, limit=MAX_HITS).items
            hits += _units(name, index, row.qualified, ask.relation, found, allowed)
        return hits
    finally:
        store.close()


def _subjects(
    store: GraphStore, names: tuple[str, ...], allowed: Callable[[str], bool]
) -> list[SymbolRow]:
    """The definitions of the first name the symbol table knows (in an allowed file)."""
    for written in names:
        rows = [r for r in find_symbol(store, written, 50)[0] if allowed(r.path)]
        if rows:
            return rows[:MAX_DEFINITIONS]
    return []


def _file(store: GraphStore, names: tuple[str, ...], allowed: Callable[[str], bool]) -> str | None:
    for written in names:
        paths = [p for p in store.paths_ending(written.strip("/")) if allowed(p)]
        if paths:
            return paths[0]
    return None


def _units(
    collection: str,
    index: VaultIndex,
    subject: str,
    relation: str,
    found: list[Related],
    allowed: Callable[[str], bool],
) -> list[Hit]:
    """Each related definition's unit: the one whose lines hold it (the edge's line for a
    file), the narrowest first; a relation into a file left out is dropped."""
    hits: list[Hit] = []
    seen: set[str] = set()
    for item in found:
        if item.path is None or not allowed(item.path):
            continue
        line = item.line_start or item.at_line
        chunk = unit_at(index, item.path, line)
        if chunk is None or chunk.id in seen:
            continue
        seen.add(chunk.id)
        hit = unit_result(chunk)
        hit.collection = collection
        hit.graph_reason = reason(relation, subject, item.confidence)
        hits.append((item.confidence, hit))
    return hits


def unit_at(index: VaultIndex, path: str, line: int) -> Chunk | None:
    """The narrowest unit of `path` holding `line` (no line, or none holds it: its first)."""
    chunks = index.manifest.note_chunks(path)
    holding = [c for c in chunks if c.line_start <= line <= c.line_end] if line else []
    if holding:
        return min(holding, key=lambda c: (c.line_end - c.line_start, c.line_start))
    return chunks[0] if chunks else None


def _note_units(store: GraphStore, row: SymbolRow, notes: Mapping[str, VaultIndex]) -> list[Hit]:
    """The notes naming `row`: the unit of each that writes the name (else its first)."""
    hits: list[Hit] = []
    for collection, index in notes.items():
        for mention in notes_naming(note_graph(index), store, row):
            chunks = index.manifest.note_chunks(mention.note)
            if not chunks:
                continue
            chunk = next((c for c in chunks if mention.name in c.text), chunks[0])
            hit = unit_result(chunk)
            hit.collection = collection
            hit.graph_reason = reason("notes", row.qualified, mention.confidence)
            hits.append((mention.confidence, hit))
    return hits
