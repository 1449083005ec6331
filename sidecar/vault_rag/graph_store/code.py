"""Questions to one code source's graph: where a symbol is defined, and its relations, each
with a confidence in [0, 1].

Edges are stored as names (`store.py`); which definition a name means is decided here, from
the symbol table as it is now:

| a call of `f` held by `A::g` in `x.cpp` | candidates | confidence |
|---|---|---|
| `A::f` exists (`self.f()`, `this->f()`, or a plain `f()`) | that one | .95 self, .9 plain |
| `f` defined in `x.cpp` | those | .8 |
| written qualified (`ns::f`, `m.f`) and one definition ends with it | it | .85 |
| one definition of `f` in the whole source | it | .6 (.5 for `obj.f()`) |
| n definitions, none closer | each | .5 / n (at least .02) |

Bases and derived classes follow the same rules (the class kinds only); an include is matched
by path (the includer's folder first). Fan-out is bounded: `max_scan` edges are read per
question (`truncated` says when more existed) and `limit` relations are returned, best first,
with the `total` found."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from vault_rag.graph_store.store import EdgeRow, GraphStore, SymbolRow, last_part

CLASS_KINDS = frozenset({"class", "struct", "union", "interface", "record", "trait", "enum"})
CALLABLE = frozenset({"function"}) | CLASS_KINDS  # `Widget()` constructs a Widget
MAX_SCAN = 50_000
RELATIONS = (
    "callers",
    "callees",
    "bases",
    "derived",
    "contains",
    "contained_by",
    "includes",
    "included_by",
)


@dataclass(frozen=True)
class Related:
    relation: str  # callers | callees | bases | derived | contains | includes | …
    path: str | None  # the related file (None: a name defined nowhere in this source)
    symbol: str | None  # its qualified name (None for a file)
    kind: str  # function | class | … | file | external
    line_start: int
    line_end: int
    confidence: float
    why: str  # how it was resolved (`same class`, `same file`, `unique name`, `ambiguous: 3`)
    name: str = ""  # the name as written at the edge
    at_line: int = 0  # where the edge is (the call, the base list, the include)
    count: int = 1  # calls of that name there


@dataclass
class Relations:
    subject: SymbolRow | None
    path: str
    relation: str
    items: list[Related] = field(default_factory=list)
    total: int = 0
    truncated: bool = False


def find_symbol(store: GraphStore, query: str, limit: int = 20) -> tuple[list[SymbolRow], int]:
    """Definitions of `query` (`f`, `A::f`, `pkg.mod.f`, any case): exact qualified matches
    first, then classes before functions, then by path. (definitions, how many there are)."""
    query = query.strip().rstrip("()")
    name = last_part(query)
    if not name:
        return [], 0
    rows = store.symbols_named(name, nocase=True)
    if any(r.name == name for r in rows):  # `Helper` is not Python's `helper`
        rows = [r for r in rows if r.name == name]
    wanted = name_parts(query)
    if len(wanted) > 1:
        rows = [r for r in rows if _qualified_match(r, wanted)]

    def rank(r: SymbolRow) -> tuple:
        return (
            r.qualified != query,
            r.name != name,
            r.kind not in CLASS_KINDS,
            r.path,
            r.line_start,
        )

    rows.sort(key=rank)
    return rows[:limit], len(rows)


def relations(
    store: GraphStore,
    subject: SymbolRow | None,
    relation: str,
    *,
    path: str | None = None,
    limit: int = 50,
    max_scan: int = MAX_SCAN,
) -> Relations:
    """`relation` of a definition (`subject`), or of a file (`path`) for the file relations."""
    file = subject.path if subject is not None else path or ""
    out = Relations(subject, file, relation)
    resolver = _Resolver(store)
    found: list[Related] = []
    if relation == "callers" and subject is not None:
        edges = store.edges_to(["calls"], subject.name, max_scan + 1)
        out.truncated = len(edges) > max_scan
        for edge in edges[:max_scan]:
            for target, confidence, why in resolver.resolve(edge, CALLABLE):
                if target == subject:
                    found.append(resolver.holder(edge, "callers", confidence, why))
    elif relation == "callees" and subject is not None:
        edges = store.edges_from(["calls"], subject.path, subject.qualified, max_scan + 1)
        out.truncated = len(edges) > max_scan
        for edge in edges[:max_scan]:
            if edge.source_line != subject.line_start:
                continue  # another definition of the same name in this file
            found.extend(_targets(resolver.resolve(edge, CALLABLE), edge, "callees"))
    elif relation == "bases" and subject is not None:
        edges = store.edges_from(["inherits"], subject.path, subject.qualified, max_scan)
        for edge in edges:
            if edge.source_line == subject.line_start:
                found.extend(_targets(resolver.resolve(edge, CLASS_KINDS), edge, "bases"))
    elif relation == "derived" and subject is not None:
        edges = store.edges_to(["inherits"], subject.name, max_scan + 1)
        out.truncated = len(edges) > max_scan
        for edge in edges[:max_scan]:
            for target, confidence, why in resolver.resolve(edge, CLASS_KINDS):
                if target == subject:
                    found.append(resolver.holder(edge, "derived", confidence, why))
    elif relation == "contains":
        if subject is None:
            rows = store.symbols_in(file)
            named = {r.qualified for r in rows}  # (a namespace is no symbol: `eng::Base` is top)
            found = [
                _of_symbol(r, "contains", 1.0, "in the file") for r in rows if r.parent not in named
            ]
        else:
            for row in store.children_of(subject.name):
                if ends_with(name_parts(row.parent), name_parts(subject.qualified)) or ends_with(
                    name_parts(subject.qualified), name_parts(row.parent)
                ):
                    same = row.path == subject.path
                    found.append(
                        _of_symbol(row, "contains", 1.0 if same else 0.8, "enclosing name")
                    )
    elif relation == "contained_by" and subject is not None and subject.parent:
        parent = SymbolRow("", subject.parent, last_part(subject.parent), "", "", 0, 0)
        for row, confidence, why in resolver.named(parent.qualified, subject.path, "", CLASS_KINDS):
            found.append(_of_symbol(row, "contained_by", confidence, why))
    elif relation == "includes":
        edges = store.edges_from(["includes", "imports"], file, None, max_scan)
        for edge in edges:
            found.extend(_file_targets(resolver.files(edge), edge, "includes"))
    elif relation == "included_by":
        tail = file.rsplit("/", 1)[-1]
        names = {tail, tail.rsplit(".", 1)[0]}  # `b.h`; `mod` for `import pkg.mod`
        if tail == "__init__.py" and "/" in file:
            names.add(file.rsplit("/", 2)[-2])
        edges = [
            e for n in sorted(names) for e in store.edges_to(["includes", "imports"], n, max_scan)
        ]
        out.truncated = len(edges) > max_scan
        for edge in edges[:max_scan]:
            for target, confidence, why in resolver.files(edge):
                if target == file:
                    found.append(
                        Related(
                            "included_by",
                            edge.path,
                            None,
                            "file",
                            edge.line,
                            edge.line,
                            confidence,
                            why,
                            edge.target,
                            edge.line,
                        )
                    )
    found.sort(key=lambda r: (-r.confidence, -r.count, r.path or "~", r.line_start, r.name))
    out.total = len(found)
    out.items = found[:limit]
    return out


def _edge_holder(
    holders: dict[tuple[str, int], SymbolRow],
    edge: EdgeRow,
    relation: str,
    confidence: float,
    why: str,
) -> Related:
    """The symbol (or file) holding `edge`: the caller, the derived class (`holders`: the
    symbols of the edge's file by name and first line)."""
    holder = holders.get((edge.source, edge.source_line)) if edge.source else None
    if holder is None:  # the file itself, or a class inside a function body (no symbol)
        return Related(
            relation,
            edge.path,
            edge.source or None,
            ("class" if relation == "derived" else "function") if edge.source else "file",
            edge.line,
            edge.line,
            confidence,
            why,
            edge.target,
            edge.line,
            edge.count,
        )
    return Related(
        relation,
        holder.path,
        holder.qualified,
        holder.kind,
        holder.line_start,
        holder.line_end,
        confidence,
        why,
        edge.target,
        edge.line,
        edge.count,
    )


def _targets(
    resolved: list[tuple[SymbolRow, float, str]], edge: EdgeRow, relation: str
) -> list[Related]:
    if not resolved:
        return [
            Related(
                relation,
                None,
                None,
                "external",
                0,
                0,
                0.0,
                "not defined in this source",
                edge.target,
                edge.line,
                edge.count,
            )
        ]
    return [
        Related(
            relation,
            row.path,
            row.qualified,
            row.kind,
            row.line_start,
            row.line_end,
            confidence,
            why,
            edge.target,
            edge.line,
            edge.count,
        )
        for row, confidence, why in resolved
    ]


def _file_targets(
    resolved: list[tuple[str, float, str]], edge: EdgeRow, relation: str
) -> list[Related]:
    if not resolved:
        why = "a system header" if edge.hint == "system" else "not a file of this source"
        return [Related(relation, None, None, "external", 0, 0, 0.0, why, edge.target, edge.line)]
    return [
        Related(relation, path, None, "file", 1, 1, confidence, why, edge.target, edge.line)
        for path, confidence, why in resolved
    ]


def _of_symbol(row: SymbolRow, relation: str, confidence: float, why: str) -> Related:
    return Related(
        relation,
        row.path,
        row.qualified,
        row.kind,
        row.line_start,
        row.line_end,
        confidence,
        why,
        row.name,
        row.line_start,
    )


class _Resolver:
    """Names → definitions with a confidence (the module doc's table), cached per question."""

    SHOWN = 10  # an ambiguous name resolves to at most this many definitions

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._named: dict[str, list[SymbolRow]] = {}
        self._files: dict[str, dict[tuple[str, int], SymbolRow]] = {}  # path → its symbols

    def holder(self, edge: EdgeRow, relation: str, confidence: float, why: str) -> Related:
        symbols = self._files.get(edge.path)
        if symbols is None:
            symbols = {(s.qualified, s.line_start): s for s in self.store.symbols_in(edge.path)}
            self._files[edge.path] = symbols
        return _edge_holder(symbols, edge, relation, confidence, why)

    def definitions(self, name: str) -> list[SymbolRow]:
        if name not in self._named:
            self._named[name] = self.store.symbols_named(name)
        return self._named[name]

    def resolve(self, edge: EdgeRow, kinds: Iterable[str]) -> list[tuple[SymbolRow, float, str]]:
        return self.named(edge.target, edge.path, edge.source, frozenset(kinds), edge.hint)

    def named(
        self, target: str, path: str, source: str, kinds: frozenset[str], hint: str = ""
    ) -> list[tuple[SymbolRow, float, str]]:
        rows = [r for r in self.definitions(last_part(target)) if r.kind in kinds]
        if not rows:
            return []
        written = name_parts(target)
        if len(written) > 1:
            exact = [r for r in rows if ends_with(name_parts(r.qualified), written)]
            if exact:
                return self._spread(exact, 0.85, "qualified name")
        caller_class = name_parts(source)[:-1]
        if caller_class and "function" in kinds:
            same_class = [
                r
                for r in rows
                if name_parts(r.parent)
                and (
                    ends_with(name_parts(r.parent), caller_class)
                    or ends_with(caller_class, name_parts(r.parent))
                )
            ]
            if same_class:
                return self._spread(same_class, 0.95 if hint == "self" else 0.9, "same class")
            inherited = self._inherited(rows, caller_class)
            if inherited:
                return self._spread(inherited, 0.85, "base class")
        same_file = [r for r in rows if r.path == path]
        if same_file:
            return self._spread(same_file, 0.8, "same file")
        if len(rows) == 1:
            return [(rows[0], 0.5 if hint == "member" else 0.6, "unique name")]
        confidence = max(0.02, round(0.5 / len(rows), 3))
        rows = sorted(rows, key=lambda r: (r.path, r.line_start))[: self.SHOWN]
        return [(r, confidence, f"ambiguous: {len(rows)} definitions") for r in rows]

    def _inherited(self, rows: list[SymbolRow], caller_class: tuple[str, ...]) -> list[SymbolRow]:
        """The candidates defined in a base of the caller's class (three levels up at most)."""
        seen: set[str] = set()
        level = ["::".join(caller_class)]
        for _ in range(3):
            bases = {last_part(b) for q in level for b in self.store.bases_written(q)} - seen
            if not bases:
                return []
            seen |= bases
            found = [r for r in rows if r.parent and last_part(r.parent) in bases]
            if found:
                return found
            level = sorted(
                d.qualified for b in bases for d in self.definitions(b) if d.kind in CLASS_KINDS
            )
        return []

    def _spread(
        self, rows: list[SymbolRow], best: float, why: str
    ) -> list[tuple[SymbolRow, float, str]]:
        if len(rows) == 1:
            return [(rows[0], best, why)]
        confidence = round(best / len(rows), 3)
        return [(r, confidence, f"{why}, {len(rows)} definitions") for r in rows[: self.SHOWN]]

    def files(self, edge: EdgeRow) -> list[tuple[str, float, str]]:
        """The files of this source an include or import names."""
        here = edge.path.rsplit("/", 1)[0] if "/" in edge.path else ""
        if edge.kind == "includes":
            tails = [edge.target]
        else:
            dots = len(edge.target) - len(edge.target.lstrip("."))
            module = edge.target.lstrip(".").replace(".", "/")
            if dots:  # `from .x import y`: relative to the importer's package
                base = here
                for _ in range(dots - 1):
                    base = base.rsplit("/", 1)[0] if "/" in base else ""
                module = f"{base}/{module}".strip("/")
            tails = [f"{module}.py", f"{module}/__init__.py"] if module else []
            tails += (
                [module + suffix for suffix in (".ts", ".js", ".java", ".go")] if module else []
            )
        candidates = sorted({p for tail in tails if tail for p in self.store.paths_ending(tail)})
        if not candidates:
            return []
        beside = [p for p in candidates if any(p == f"{here}/{t}".lstrip("/") for t in tails)]
        if beside:
            return [(beside[0], 1.0, "the includer's folder")]
        if len(candidates) == 1:
            return [(candidates[0], 0.9, "unique path")]
        confidence = max(0.05, round(0.6 / len(candidates), 3))
        return [(p, confidence, f"ambiguous: {len(candidates)} files") for p in candidates[:10]]


def _qualified_match(row: SymbolRow, wanted: tuple[str, ...]) -> bool:
    """`A::f` ends `ns::A::f`; `pkg.mod.A.f` is `A::f` in a file `…/pkg/mod.py` (any case)."""
    own = name_parts(row.qualified)
    if ends_with(own, wanted, nocase=True):
        return True
    stem = row.path.rsplit(".", 1)[0].lower()
    for cut in range(1, len(wanted)):
        module, inside = wanted[:cut], wanted[cut:]
        if ends_with(own, inside, nocase=True) and len(own) == len(inside):
            tail = "/".join(module).lower()
            if stem == tail or stem.endswith("/" + tail):
                return True
    return False


def name_parts(name: str) -> tuple[str, ...]:
    name = name.replace("->", ".").replace("::", ".")
    return tuple(p for p in name.split(".") if p)


def ends_with(longer: tuple[str, ...], tail: tuple[str, ...], nocase: bool = False) -> bool:
    if not tail or len(tail) > len(longer):
        return False
    if nocase:
        return tuple(p.lower() for p in longer[-len(tail) :]) == tuple(p.lower() for p in tail)
    return longer[-len(tail) :] == tail
