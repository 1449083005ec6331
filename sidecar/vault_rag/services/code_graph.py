"""The code and note graph (`graph_store/`) as the MCP tools `find_symbol`, `symbol_relations`
and `note_links` serve it: the code sources' relations with a confidence each, the notes'
links, and the links between notes and code.

Never served: a note in an excluded folder (as the subject: `excluded`, 403; as a related
note: left out), nor a code file the source's own rules now leave out (its include/exclude
and `.gitignore` files, `source_indexes/specs.path_rules`), even before the next index run
drops it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from vault_rag.graph_store.code import RELATIONS, Related, find_symbol, relations
from vault_rag.graph_store.mentions import notes_naming, symbols_named_by
from vault_rag.graph_store.notes import NoteGraph, note_graph
from vault_rag.graph_store.store import GraphStore, SymbolRow
from vault_rag.graph_store.sync import open_graph
from vault_rag.services.errors import ServiceError, bad_input
from vault_rag.services.parts import VaultParts, served_path, visible
from vault_rag.services.search import searched
from vault_rag.source_indexes.specs import VAULT, all_specs, kept_by

SYMBOL_RELATIONS = (*RELATIONS, "notes")
FILE_RELATIONS = ("contains", "includes", "included_by")  # of a file, given `path` alone
MAX_LIMIT = 500


@dataclass
class Definition:
    collection: str
    path: str
    symbol: str
    kind: str
    line_start: int
    line_end: int


@dataclass
class SymbolRelations:
    relation: str
    subject: Definition | None  # None: a file's relations (`path` alone)
    path: str
    items: list[tuple[str, Related]] = field(default_factory=list)  # (collection, related)
    total: int = 0
    truncated: bool = False
    other_definitions: list[Definition] = field(default_factory=list)


@dataclass
class NoteLinks:
    collection: str
    path: str
    out: list[tuple[str, str]]  # (note, link | embed | canvas)
    back: list[tuple[str, str]]
    tags: list[str]
    symbols: list[tuple[str, str, Definition, float]]  # (name written, collection, def, conf)
    other: str | None = None
    shared_out: list[str] = field(default_factory=list)
    shared_back: list[str] = field(default_factory=list)
    links_between: list[str] = field(default_factory=list)  # "a→b", "b→a"


def _kinds(parts: VaultParts) -> dict[str, str]:
    return {s.name: s.kind for s in all_specs(parts.settings, parts.index.data_dir)}


def _specs(parts: VaultParts) -> dict:
    return {s.name: s for s in all_specs(parts.settings, parts.index.data_dir)}


@contextmanager
def code_graphs(
    parts: VaultParts, collections: list[str] | None
) -> Iterator[dict[str, tuple[GraphStore, Callable[[str], bool]]]]:
    """The graphs of the code sources among `collections` (default every one), each with the
    test its files must pass to be served."""
    specs = _specs(parts)
    code = [name for name, spec in specs.items() if spec.kind == "code"]
    if collections is None:
        collections = code  # every code source, whatever `default_collections` says
    indexes = searched(parts, collections) if collections else {}
    stores: dict[str, tuple[GraphStore, Callable[[str], bool]]] = {}
    try:
        for name, index in indexes.items():
            if name not in code:
                continue
            store = open_graph(index, parts.settings.max_code_kb)
            stores[name] = (store, kept_by(specs[name], index.vault_root))
        yield stores
    finally:
        for store, _ in stores.values():
            store.close()


def note_graphs(parts: VaultParts) -> dict[str, NoteGraph]:
    """The vault's note graph, and those of the sources that are vaults or Markdown."""
    kinds = _kinds(parts)
    wanted = [VAULT, *(name for name, kind in kinds.items() if kind in ("vault", "markdown"))]
    return {name: note_graph(index) for name, index in searched(parts, wanted).items()}


def _definition(collection: str, row: SymbolRow) -> Definition:
    return Definition(collection, row.path, row.qualified, row.kind, row.line_start, row.line_end)


def _limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise bad_input(f"limit must be between 1 and {MAX_LIMIT}, got {limit}", limit=limit)
    return limit


def find_symbols(
    parts: VaultParts, name: str, *, collections: list[str] | None = None, limit: int = 20
) -> tuple[list[Definition], int]:
    """Where `name` (`f`, `A::f`, `pkg.mod.f`) is defined in the code sources."""
    if not name.strip():
        raise bad_input("name is empty: give a function, method or class name")
    _limit(limit)
    found: list[Definition] = []
    total = 0
    with code_graphs(parts, collections) as graphs:
        for collection, (store, allowed) in graphs.items():
            rows, _ = find_symbol(store, name, MAX_LIMIT)
            rows = [r for r in rows if allowed(r.path)]
            total += len(rows)
            found.extend(_definition(collection, r) for r in rows)
    return found[:limit], total


def symbol_relations(
    parts: VaultParts,
    relation: str,
    *,
    symbol: str | None = None,
    path: str | None = None,
    collection: str | None = None,
    limit: int = 50,
) -> SymbolRelations:
    """`relation` of `symbol` (its definition in `path` when given, else its best one), or of
    the file `path` (`includes`, `included_by`, `contains`)."""
    if relation not in SYMBOL_RELATIONS:
        raise bad_input(f"relation must be one of {', '.join(SYMBOL_RELATIONS)}", relation=relation)
    _limit(limit)
    if not (symbol or "").strip() and not (path or "").strip():
        raise bad_input("give a symbol, or a file's path")
    if not (symbol or "").strip() and relation not in FILE_RELATIONS:
        raise bad_input(f"relation {relation!r} needs a symbol", relation=relation)
    wanted = [collection] if collection else None
    with code_graphs(parts, wanted) as graphs:
        if not graphs:
            raise ServiceError(
                404, "no_code", "no code source is indexed here (or under that name)"
            )
        subject: tuple[str, GraphStore, SymbolRow] | None = None
        others: list[Definition] = []
        if symbol and symbol.strip():
            for name, (store, allowed) in graphs.items():
                rows, _ = find_symbol(store, symbol, MAX_LIMIT)
                for row in rows:
                    if not allowed(row.path) or (path and row.path != path):
                        continue
                    if subject is None:
                        subject = (name, store, row)
                    elif len(others) < 10:
                        others.append(_definition(name, row))
            if subject is None:
                raise ServiceError(
                    404,
                    "unknown_symbol",
                    f"no definition of {symbol!r} in the code sources",
                    {"symbol": symbol, "path": path},
                )
        if subject is None:  # a file's relations
            name, (store, allowed) = next(
                ((n, g) for n, g in graphs.items() if g[0].file_info(path or "") is not None),
                (None, (None, None)),
            )
            if name is None or store is None or allowed is None or not allowed(path or ""):
                raise ServiceError(404, "unknown_file", f"no code file {path!r}", {"path": path})
            return _relations_of(name, store, allowed, None, path or "", relation, limit, [])
        name, store, row = subject
        allowed = graphs[name][1]
        if relation == "notes":
            return _notes_naming(parts, name, store, row, limit, others)
        return _relations_of(name, store, allowed, row, row.path, relation, limit, others)


def _relations_of(
    collection: str,
    store: GraphStore,
    allowed: Callable[[str], bool],
    row: SymbolRow | None,
    path: str,
    relation: str,
    limit: int,
    others: list[Definition],
) -> SymbolRelations:
    if relation == "notes":
        raise bad_input("relation 'notes' needs a symbol")
    found = relations(store, row, relation, path=path, limit=MAX_LIMIT)
    kept = [r for r in found.items if r.path is None or allowed(r.path)]
    return SymbolRelations(
        relation,
        _definition(collection, row) if row is not None else None,
        path,
        [(collection, r) for r in kept[:limit]],
        total=found.total - (len(found.items) - len(kept)),
        truncated=found.truncated or found.total > MAX_LIMIT,
        other_definitions=others,
    )


def _notes_naming(
    parts: VaultParts,
    collection: str,
    store: GraphStore,
    row: SymbolRow,
    limit: int,
    others: list[Definition],
) -> SymbolRelations:
    items: list[tuple[str, Related]] = []
    for graph_name, graph in note_graphs(parts).items():
        for mention in notes_naming(graph, store, row):
            if graph_name == VAULT and not visible(parts, mention.note):
                continue
            items.append(
                (
                    graph_name,
                    Related(
                        "notes",
                        mention.note,
                        None,
                        "note",
                        0,
                        0,
                        mention.confidence,
                        "the note names it",
                        mention.name,
                    ),
                )
            )
    items.sort(key=lambda i: (-i[1].confidence, i[0], i[1].path or ""))
    return SymbolRelations(
        "notes",
        _definition(collection, row),
        row.path,
        items[:limit],
        total=len(items),
        other_definitions=others,
    )


def note_links(
    parts: VaultParts, path: str, *, other: str | None = None, collection: str = VAULT
) -> NoteLinks:
    """A note's links out (links, embeds, canvas edges), its backlinks, tags, the code symbols
    it names; with `other`, what the two notes share."""
    graphs = note_graphs(parts)
    if collection not in graphs:
        raise bad_input(f"{collection!r} is not a collection of notes", collection=collection)
    graph = graphs[collection]
    note = served_path(path, parts) if collection == VAULT else path
    index = searched(parts, [collection])[collection]
    if note not in index.manifest.notes():
        raise ServiceError(404, "not_found", f"no note {note!r} in {collection}", {"path": note})

    def shown(p: str) -> bool:
        return collection != VAULT or visible(parts, p)

    out = sorted((t, k) for t, k in graph.out.get(note, {}).items() if shown(t))
    back = sorted((n, k) for n, k in graph.back.get(note, {}).items() if shown(n))
    symbols: list[tuple[str, str, Definition, float]] = []
    with code_graphs(parts, None) as code:
        for name, (store, allowed) in code.items():
            for mention in symbols_named_by(graph, store, note):
                if allowed(mention.symbol.path):
                    symbols.append(
                        (mention.name, name, _definition(name, mention.symbol), mention.confidence)
                    )
    symbols.sort(key=lambda s: (-s[3], s[0], s[2].path))
    result = NoteLinks(collection, note, out, back, sorted(graph.tags.get(note, ())), symbols[:100])
    if other:
        second = served_path(other, parts) if collection == VAULT else other
        if second not in index.manifest.notes():
            raise ServiceError(404, "not_found", f"no note {second!r} in {collection}")
        mine, theirs = graph.out.get(note, {}), graph.out.get(second, {})
        result.other = second
        result.shared_out = sorted(t for t in set(mine) & set(theirs) if shown(t))
        result.shared_back = sorted(
            n for n in set(graph.back.get(note, {})) & set(graph.back.get(second, {})) if shown(n)
        )
        result.links_between = [
            f"{a} → {b}" for a, b in ((note, second), (second, note)) if b in graph.out.get(a, {})
        ]
    return result
