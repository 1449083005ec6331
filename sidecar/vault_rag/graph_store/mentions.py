"""Links across collections: a note that names a code symbol links to that symbol's unit.

A name the note writes (`notes.code_names`) meets a code source's symbol table:

- qualified (`UObject::BeginDestroy`, `pybind11::gil_scoped_release`): the definitions whose
  name ends with it, .9 for one, .7 / n for n;
- a backticked single name (`` `BeginDestroy` ``): the definitions of that name, .7 for one,
  .5 / n up to `MAX_BARE`, none beyond (too common a name to mean one symbol).

Both ways: the symbols a note names (`symbols_named_by`), the notes naming a symbol
(`notes_naming`)."""

from __future__ import annotations

from dataclasses import dataclass

from vault_rag.graph_store.code import CALLABLE, ends_with, name_parts
from vault_rag.graph_store.notes import NoteGraph, last_name
from vault_rag.graph_store.store import GraphStore, SymbolRow

MAX_BARE = 5  # a bare name defined more often than this links to nothing


@dataclass(frozen=True)
class Mention:
    note: str
    name: str  # as the note writes it
    symbol: SymbolRow
    confidence: float


def resolve_name(store: GraphStore, name: str) -> list[tuple[SymbolRow, float]]:
    rows = [r for r in store.symbols_named(last_name(name)) if r.kind in CALLABLE]
    written = name_parts(name)
    if len(written) > 1:
        rows = [r for r in rows if ends_with(name_parts(r.qualified), written)]
        if not rows:
            return []
        best = 0.9 if len(rows) == 1 else round(0.7 / len(rows), 3)
        return [(r, best) for r in rows[:10]]
    if not rows or len(rows) > MAX_BARE:
        return []
    return [(r, 0.7 if len(rows) == 1 else round(0.5 / len(rows), 3)) for r in rows]


def symbols_named_by(graph: NoteGraph, store: GraphStore, note: str) -> list[Mention]:
    found = [
        Mention(note, name, row, confidence)
        for name in sorted(graph.mentions.get(note, ()))
        for row, confidence in resolve_name(store, name)
    ]
    found.sort(key=lambda m: (-m.confidence, m.name, m.symbol.path))
    return found


def notes_naming(graph: NoteGraph, store: GraphStore, symbol: SymbolRow) -> list[Mention]:
    found = []
    for note, name in sorted(graph.by_name.get(symbol.name, ())):
        for row, confidence in resolve_name(store, name):
            if row == symbol:
                found.append(Mention(note, name, row, confidence))
    found.sort(key=lambda m: (-m.confidence, m.note))
    return found
