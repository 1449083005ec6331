"""Cross-collection links on search results (issue 43, part 3): a note hit that names a code
symbol (`DBImpl::Write`, `` `gil_scoped_release` ``) links to that symbol's unit in a code
source beside the vault; a code hit links to the notes that name its symbol. Each hit gets
at most `MAX_LINKED` `LinkedUnit`s, best first, with the reason (`note names DBImpl::Write`).

The names and their resolution are the graph's own (`graph_store/notes.code_names`,
`graph_store/mentions.resolve_name` / `notes_naming`); only names worth a link are kept
(`worth_linking`: qualified, or a CamelCase / snake_case identifier of `MIN_NAME` characters
or more), and a bare name defined more than `mentions.MAX_BARE` times links to nothing.

Only when a code source is among the searched indexes: else the results are returned as they
are (no `linked`, so vault-only JSON is byte-identical). A file a source's own rules leave out
is never linked (the rule `graph_route.py` applies); a graph that cannot be read gives no
links and a logged warning, never an error."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from vault_rag.chunking.types import Chunk
from vault_rag.graph_store.mentions import notes_naming, resolve_name
from vault_rag.graph_store.notes import code_names, last_name, note_graph
from vault_rag.graph_store.store import GraphStore, SymbolRow
from vault_rag.graph_store.sync import open_graph
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import unit_result
from vault_rag.retrieval.results import LinkedUnit, SearchResult
from vault_rag.settings import Settings
from vault_rag.source_indexes.graph_route import NOTE_KINDS, unit_at
from vault_rag.source_indexes.specs import VAULT, all_specs, kept_by

log = logging.getLogger(__name__)

MAX_LINKED = 3  # links per hit
MIN_NAME = 4  # a bare (unqualified) name shorter than this never links
TEXT_CHARS = 200  # of the linked unit's text
_Scored = tuple[float, LinkedUnit]


@dataclass
class _Code:
    name: str
    index: VaultIndex
    store: GraphStore
    allowed: Callable[[str], bool]


def worth_linking(name: str) -> bool:
    """A name that means a symbol rather than a word: qualified (`A::b`, `a.b`), or a
    CamelCase / snake_case identifier of at least `MIN_NAME` characters."""
    if "::" in name or "." in name:
        return True
    return len(name) >= MIN_NAME and ("_" in name.strip("_") or any(c.isupper() for c in name))


def link_pairs(
    settings: Settings,
    data_dir: Path,
    indexes: Mapping[str, VaultIndex],
    results: list[SearchResult],
) -> list[SearchResult]:
    """`results` with each hit's `linked` units; unchanged when no code source is searched."""
    specs = all_specs(settings, data_dir)
    code_specs = [s for s in specs if s.kind == "code" and s.name in indexes]
    if not code_specs or not results:
        return results
    kinds = {s.name: s.kind for s in specs}
    notes = {n: i for n, i in indexes.items() if n == VAULT or kinds.get(n) in NOTE_KINDS}
    sources: list[_Code] = []
    try:
        for spec in code_specs:
            index = indexes[spec.name]
            try:
                store = open_graph(index, settings.max_code_kb)
            except (sqlite3.Error, OSError) as exc:
                log.warning("no cross-collection links from %s: its graph (%s)", spec.name, exc)
                continue
            sources.append(_Code(spec.name, index, store, kept_by(spec, index.vault_root)))
        if not sources:
            return results
        linked: list[SearchResult] = []
        for result in results:
            try:
                units = _links(result, sources, notes)
            except sqlite3.Error as exc:
                log.warning("no cross-collection links for %s: %s", result.note_path, exc)
                units = []
            linked.append(replace(result, linked=units) if units else result)
        return linked
    finally:
        for source in sources:
            source.store.close()


def _links(
    result: SearchResult, sources: list[_Code], notes: Mapping[str, VaultIndex]
) -> list[LinkedUnit]:
    code = next((s for s in sources if s.name == result.collection), None)
    if code is not None:
        found = _notes_of_code(result, code, notes) if result.symbol else []
    elif result.collection in notes and result.kind != "code":
        found = _code_of_note(result, sources, notes[result.collection])
    else:
        return []
    found.sort(key=lambda scored: -scored[0])  # stable: the order names were found in
    kept: list[LinkedUnit] = []
    seen: set[tuple[str, str, int]] = set()
    for _, unit in found:
        key = (unit.collection, unit.note_path, unit.line_start)
        if key not in seen:
            seen.add(key)
            kept.append(unit)
    return kept[:MAX_LINKED]


def _code_of_note(result: SearchResult, sources: list[_Code], index: VaultIndex) -> list[_Scored]:
    """The definitions the hit's passage names (else the note as a whole)."""
    names = sorted(n for n in code_names(result.text) if worth_linking(n))
    if not names:
        mentions = note_graph(index).mentions.get(result.note_path, set())
        names = sorted(n for n in mentions if worth_linking(n))
    found: list[_Scored] = []
    for source in sources:
        for name in names:
            rows = [(r, c) for r, c in resolve_name(source.store, name) if source.allowed(r.path)]
            for row, confidence in rows:
                chunk = unit_at(source.index, row.path, row.line_start)
                if chunk is None:
                    continue
                why = f"note names {name}"
                if len(rows) > 1:
                    why += f" (one of {len(rows)} definitions)"
                found.append((confidence, _unit("code", source.name, chunk, row.qualified, why)))
    return found


def _notes_of_code(
    result: SearchResult, code: _Code, notes: Mapping[str, VaultIndex]
) -> list[_Scored]:
    """The notes naming the code hit's symbol."""
    if not code.allowed(result.note_path):
        return []
    row = _symbol_row(code.store, result)
    if row is None:
        return []
    found: list[_Scored] = []
    for collection, index in notes.items():
        for mention in notes_naming(note_graph(index), code.store, row):
            if not worth_linking(mention.name):
                continue
            chunks = index.manifest.note_chunks(mention.note)
            chunk = next((c for c in chunks if mention.name in c.text), None)
            if chunk is None:
                continue
            why = f"note names {mention.name}"
            found.append((mention.confidence, _unit("note", collection, chunk, row.qualified, why)))
    return found


def _symbol_row(store: GraphStore, result: SearchResult) -> SymbolRow | None:
    """The code hit's definition in the symbol table: its qualified name in its file, at its
    lines."""
    assert result.symbol is not None
    in_file = store.symbols_in(result.note_path)
    rows = [r for r in in_file if r.qualified == result.symbol]
    if not rows:
        named = last_name(result.symbol)
        rows = [r for r in in_file if r.name == named]
    inside = [r for r in rows if result.line_start <= r.line_start <= result.line_end]
    return (inside or rows or [None])[0]


def _unit(kind: str, collection: str, chunk: Chunk, symbol: str, reason: str) -> LinkedUnit:
    hit = unit_result(chunk)
    text = " ".join(hit.text.split())
    return LinkedUnit(
        kind=kind,
        collection=collection,
        note_path=hit.note_path,
        symbol=symbol,
        line_start=hit.line_start,
        line_end=hit.line_end,
        heading_path=hit.heading_path,
        text=text[:TEXT_CHARS],
        reason=reason,
    )


def linked_results(
    indexes: Mapping[str, VaultIndex], results: list[SearchResult], top: int
) -> list[SearchResult]:
    """The units the `top` hits of each collection link to, as search results (each with its
    reason in `graph_reason`, `pair: …`), not already among `results`; for the answer graph.
    (Per collection: routing may fill the first places with code, and a pair question wants
    the best notes' code as much as the best code's notes.)"""
    have = {(r.collection, r.chunk_id) for r in results}
    found: list[SearchResult] = []
    taken: dict[str, int] = {}
    for result in results:
        taken[result.collection] = taken.get(result.collection, 0) + 1
        if taken[result.collection] > top:
            continue
        for unit in result.linked:
            index = indexes.get(unit.collection)
            chunk = None if index is None else unit_at(index, unit.note_path, unit.line_start)
            if chunk is None or (unit.collection, chunk.id) in have:
                continue
            have.add((unit.collection, chunk.id))
            hit = unit_result(chunk)
            hit.collection = unit.collection
            hit.graph_reason = f"pair: {unit.reason} ({result.note_path})"
            found.append(hit)
    return found
