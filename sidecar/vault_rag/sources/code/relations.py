"""A parsed code file's relations, from the same tree-sitter parse as its symbols
(`symbols.py`): what each symbol calls, what a class derives from, what the file includes or
imports. Names only, as written (`ns::Helper`, `self.flush`, `<vector>`, `.models`): which
definition a name means is decided across the whole source when asked (`graph_store/`), so a
change to another file never leaves a stale edge here.

- CONTAINS needs no edge: a symbol's name path (`file > class > method`) says it.
- CALLS: each call's callee name, held by the innermost symbol around it (the file itself
  outside every symbol), with a hint: `self` (`self.f()`, `this->f()`), `member` (`obj.f()`)
  or none. Repeated calls of one name by one symbol are one edge with a `count`, so a name
  called 10,000 times by one function is one row; a file has at most `MAX_EDGES` edges
  (`truncated` beyond).
- INHERITS: C++ base classes, Python bases, Java/C# `extends`/`implements`, JS/TS `extends`.
- INCLUDES (C/C++ `#include`) and IMPORTS (Python, Java, JS/TS, Go, C# `using`, Rust `use`).

Never raises for bad code: a file that stops parsing halfway keeps what parsed (tree-sitter's
recovery; nodes inside ERROR are walked too), a macro that hides a declaration gives at worst
an edge held by the file instead of the symbol."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from vault_rag.sources.code.languages import LanguageSpec, blank_macros
from vault_rag.sources.code.symbols import Symbol, count_errors, symbols_of

MAX_EDGES = 20_000  # distinct edges kept per file
CALLS, INHERITS, INCLUDES, IMPORTS = "calls", "inherits", "includes", "imports"

_CALL_NODES = frozenset({"call_expression", "call", "method_invocation", "invocation_expression"})
# member access: (node type, the member's field, the object's field)
_MEMBER = {
    "field_expression": ("field", "argument"),  # C/C++ `o.m`, `p->m`; Rust `o.m`
    "attribute": ("attribute", "object"),  # Python
    "member_expression": ("property", "object"),  # JS/TS
    "selector_expression": ("field", "operand"),  # Go
    "member_access_expression": ("name", "expression"),  # C#
}
_SELF = frozenset({"self", "this", "cls", "*this", "(*this)", "base", "super"})
_QUALIFIED = frozenset({"qualified_identifier", "scoped_identifier"})
_PLAIN = frozenset({"identifier", "field_identifier", "type_identifier", "property_identifier"})
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
# `class LEVELDB_EXPORT DB {`: an export macro between `class` and the name makes the grammar
# read a function; blanked here (the graph's own parse; the units keep theirs).
_EXPORT_MACRO = re.compile(rb"(\b(?:class|struct)\s+)([A-Z][A-Z0-9_]*_(?:EXPORT|API|DLL))\b")


@dataclass(frozen=True)
class Edge:
    kind: str  # calls | inherits | includes | imports
    source: str  # the holding symbol's name (`A::f`), '' for the file itself
    source_line: int  # that symbol's first line (0 for the file)
    target: str  # the name as written, template arguments dropped
    hint: str = ""  # calls: self | member | ''; includes: system for `<…>`
    line: int = 0  # the first occurrence, 1-based
    count: int = 1  # occurrences (calls of one name by one symbol)


@dataclass
class FileGraph:
    symbols: list[Symbol]
    edges: list[Edge] = field(default_factory=list)
    errors: int = 0  # ERROR/MISSING nodes of the parse
    truncated: bool = False  # more than MAX_EDGES distinct edges: the rest left out


def relations_of(
    parser: Any, spec: LanguageSpec, source: bytes, lines: list[str], max_edges: int = MAX_EDGES
) -> FileGraph:
    """The symbols and edges of one file (`source` is its text, `lines` split from it)."""
    if spec.name in ("c", "cpp"):
        source = _EXPORT_MACRO.sub(lambda m: m[1] + b" " * len(m[2]), blank_macros(source))
    root = parser.parse(source).root_node
    symbols = symbols_of(root, spec, lines)
    owners = _Owners(symbols, len(lines))
    found: dict[tuple[str, str, int, str, str], list[int]] = {}  # key → [first line, count]
    truncated = False
    include = INCLUDES if spec.name in ("c", "cpp") else IMPORTS
    stack = [root]
    while stack:
        node = stack.pop()
        for kind, target, hint in _edges_at(node, include):
            target = target.strip()
            if not target or len(target) > 300:
                continue
            owner = owners.around(node.start_point[0] + 1, node.end_point[0] + 1)
            source_name, source_line = (owner.name, owner.start) if owner else ("", 0)
            if kind == INHERITS:
                source_name, source_line = _class_holder(node, owner, source_name, source_line)
            key = (kind, source_name, source_line, target, hint)
            seen = found.get(key)
            line = node.start_point[0] + 1
            if seen is not None:
                seen[0] = min(seen[0], line)
                seen[1] += 1
            elif len(found) < max_edges:
                found[key] = [line, 1]
            else:
                truncated = True
        stack.extend(reversed(node.named_children))
    edges = [
        Edge(kind, src, src_line, target, hint, line, count)
        for (kind, src, src_line, target, hint), (line, count) in found.items()
    ]
    edges.sort(key=lambda e: (e.line, e.kind, e.target))
    return FileGraph(symbols, edges, count_errors(root), truncated)


class _Owners:
    """The innermost symbol around a range of lines (symbols nest: class > method)."""

    def __init__(self, symbols: list[Symbol], line_count: int) -> None:
        self.by_line: dict[int, list[Symbol]] = {}
        for symbol in sorted(symbols, key=lambda s: s.end - s.start):  # innermost first
            for number in range(symbol.start, min(symbol.end, line_count + 1) + 1):
                self.by_line.setdefault(number, []).append(symbol)

    def around(self, start: int, end: int) -> Symbol | None:
        for symbol in self.by_line.get(start, ()):
            if symbol.end >= end:
                return symbol
        return None


def _edges_at(node: Any, include: str) -> list[tuple[str, str, str]]:
    kind = node.type
    if kind in _CALL_NODES:
        callee = _callee(node)
        return [(CALLS, callee[0], callee[1])] if callee else []
    if kind == "preproc_include":
        path = node.child_by_field_name("path")
        if path is None:
            return []
        raw = _text(path)
        return [(INCLUDES, raw.strip('"<>'), "system" if raw.startswith("<") else "")]
    if kind in ("base_class_clause", "superclass", "super_interfaces", "extends_interfaces"):
        return [(INHERITS, t, "") for t in _type_names(node)]
    if kind == "base_list" or kind == "class_heritage":
        return [(INHERITS, t, "") for t in _type_names(node)]
    if kind == "argument_list" and node.parent is not None:
        parent = node.parent
        if parent.type == "class_definition" and parent.child_by_field_name("superclasses") == node:
            return [
                (INHERITS, _text(c), "")
                for c in node.named_children
                if c.type in ("identifier", "attribute")
            ]
        return []
    if kind == "import_statement" and node.child_by_field_name("source") is not None:
        return [(include, _text(node.child_by_field_name("source")).strip("'\"`"), "")]  # JS
    if kind == "import_statement":  # Python `import a.b as c, d`
        names = []
        for child in node.children_by_field_name("name"):
            target = child.child_by_field_name("name") if child.type == "aliased_import" else child
            names.append((include, _text(target or child), ""))
        return names
    if kind == "import_from_statement":
        module = node.child_by_field_name("module_name")
        return [(include, _text(module).replace(" ", ""), "")] if module is not None else []
    if kind in ("import_declaration", "using_directive", "use_declaration"):
        named = [c for c in node.named_children if c.type != "comment"]
        return [(include, _text(named[0]), "")] if named else []
    if kind == "import_spec":  # Go
        path = node.child_by_field_name("path")
        return [(include, _text(path).strip('"`'), "")] if path is not None else []
    return []


def _class_holder(node: Any, owner: Symbol | None, name: str, line: int) -> tuple[str, int]:
    """The class a base list belongs to: the innermost symbol when it is that class, else (a
    class inside a function body, which is no symbol) its name under the symbol around it."""
    holder = node.parent
    while holder is not None and holder.child_by_field_name("name") is None:
        holder = holder.parent
    if holder is None:
        return name, line
    own = _strip_templates(_text(holder.child_by_field_name("name")))
    if owner is not None and owner.path and owner.path[-1] == own:
        return name, line
    return (f"{owner.name}::{own}" if owner is not None else own), holder.start_point[0] + 1


def _callee(node: Any) -> tuple[str, str] | None:
    """(the called name as written, hint) of a call node, or None (a call of a call's result,
    of a lambda, …)."""
    if node.type == "method_invocation":  # Java: `obj.name(…)`
        name = node.child_by_field_name("name")
        if name is None:
            return None
        obj = node.child_by_field_name("object")
        return _text(name), _receiver_hint(obj)
    function = node.child_by_field_name("function")
    return _name_of(function) if function is not None else None


def _name_of(node: Any) -> tuple[str, str] | None:
    kind = node.type
    if kind in _PLAIN:
        return _text(node), ""
    if kind in _QUALIFIED:
        return _strip_templates(_text(node)), ""
    if kind in ("template_function", "generic_name", "generic_function"):
        inner = node.child_by_field_name("name") or node.child_by_field_name("function")
        if inner is None and node.named_children:
            inner = node.named_children[0]
        return _name_of(inner) if inner is not None else None
    if kind in _MEMBER:
        member_field, object_field = _MEMBER[kind]
        member = node.child_by_field_name(member_field)
        if member is None:
            return None
        name = _name_of(member)
        if name is None:
            return None
        return name[0], _receiver_hint(node.child_by_field_name(object_field))
    return None


def _receiver_hint(obj: Any | None) -> str:
    if obj is None:
        return ""
    return "self" if _text(obj).replace(" ", "") in _SELF else "member"


def _type_names(node: Any) -> list[str]:
    """The type names in a base list (access specifiers, template arguments left out)."""
    names: list[str] = []
    for child in node.named_children:
        kind = child.type
        if kind in ("type_identifier", "identifier", "qualified_identifier", "scoped_identifier"):
            names.append(_strip_templates(_text(child)))
        elif kind in ("template_type", "generic_type", "generic_name"):
            inner = child.child_by_field_name("name") or (
                child.named_children[0] if child.named_children else None
            )
            if inner is not None:
                names.append(_strip_templates(_text(inner)))
        elif kind in ("type_list", "extends_clause", "implements_clause", "interface_type_list"):
            names.extend(_type_names(child))
        elif kind in ("member_expression", "scoped_type_identifier", "primary_expression"):
            names.append(_text(child))
        elif kind == "simple_base_type" or kind == "primary_constructor_base_type":
            names.extend(_type_names(child))
    return [n for n in names if n]


def _strip_templates(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _TEMPLATE_ARGS.sub("", text)
    return text.replace(" ", "")


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return " ".join(raw.decode("utf-8", "replace").split())
