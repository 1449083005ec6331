"""A parsed file's symbols: each function, method, class or struct with a body, with the names
of what encloses it (`file > class > method`), its lines widened upwards over its doc comment
and Unreal macro lines, and the lines of the symbols nested in it (a class's unit shows each
method as its first line only: the method is a unit of its own)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vault_rag.sources.code.languages import CPP, UNREAL_LINE, LanguageSpec, blank_macros

# A C/C++ declarator holds the name under nested `declarator` fields.
_NAME_TYPES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
    }
)
_BODY_FIELDS = ("body",)
# Nodes walked through as if their children were the parent's.
_TRANSPARENT = frozenset(
    {"linkage_specification", "declaration_list", "preproc_if", "preproc_ifdef", "ERROR"}
)


@dataclass
class Symbol:
    kind: str  # function | class | struct | union | enum
    path: tuple[str, ...]  # enclosing names and its own (`A::f` split into `A`, `f`)
    start: int  # 1-based first line (its doc comment and macros included)
    end: int  # 1-based last line
    nested: list[tuple[int, int]] = field(default_factory=list)  # lines of symbols inside

    @property
    def name(self) -> str:
        return "::".join(self.path) if self.path else "?"


@dataclass
class ParsedFile:
    symbols: list[Symbol]
    errors: int  # ERROR/MISSING nodes: a file made of them is read as line windows


def parse_symbols(parser: Any, spec: LanguageSpec, source: bytes, lines: list[str]) -> ParsedFile:
    """The symbols of `source` (its text split in `lines`, for the doc-comment widening)."""
    if spec.name in ("c", "cpp"):
        source = blank_macros(source)
    tree = parser.parse(source)
    found: list[Symbol] = []
    _walk(tree.root_node, spec, (), found, None, lines)
    return ParsedFile(found, _count_errors(tree.root_node))


def _walk(
    node: Any,
    spec: LanguageSpec,
    parents: tuple[str, ...],
    found: list[Symbol],
    owner: Symbol | None,
    lines: list[str],
) -> None:
    for child in node.named_children:
        kind = child.type
        target = child
        if kind in ("decorated_definition", "template_declaration"):
            inner = child.child_by_field_name("definition") or _last_symbol(child, spec)
            if inner is None:
                _walk(child, spec, parents, found, owner, lines)
                continue
            target, kind = inner, inner.type
        if kind in spec.symbols and _has_body(target):
            names = _name_path(target)
            symbol = Symbol(
                _kind_word(kind),
                (*parents, *names),
                _widen(child.start_point[0], spec, lines) + 1,
                child.end_point[0] + 1,
            )
            found.append(symbol)
            if owner is not None:
                owner.nested.append((symbol.start, symbol.end))
            body = _body(target)
            if body is not None and symbol.kind != "function":
                _walk(body, spec, symbol.path, found, symbol, lines)
        elif kind in spec.containers:
            name = target.child_by_field_name("name")
            label = _text(name) if name is not None else "(anonymous)"
            body = _body(target)
            if body is not None:
                _walk(body, spec, (*parents, label), found, owner, lines)
        elif kind in _TRANSPARENT:
            _walk(child, spec, parents, found, owner, lines)


def _last_symbol(node: Any, spec: LanguageSpec) -> Any | None:
    for child in reversed(node.named_children):
        if child.type in spec.symbols:
            return child
    return None


def _has_body(node: Any) -> bool:
    return _body(node) is not None


def _body(node: Any) -> Any | None:
    for name in _BODY_FIELDS:
        body = node.child_by_field_name(name)
        if body is not None:
            return body
    return None


def _name_path(node: Any) -> tuple[str, ...]:
    name = node.child_by_field_name("name")
    if name is None:
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type not in _NAME_TYPES:
            declarator = declarator.child_by_field_name("declarator") or next(
                (c for c in declarator.named_children if c.type in _NAME_TYPES), None
            )
        name = declarator
    if name is None:
        return ("(anonymous)",)
    text = _text(name)
    return tuple(part.strip() for part in text.split("::") if part.strip()) or (text,)


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return " ".join(raw.decode("utf-8", "replace").split())


def _kind_word(node_type: str) -> str:
    word = node_type.split("_", 1)[0]
    return {"class": "class", "struct": "struct", "union": "union", "enum": "enum"}.get(
        word, "function"
    )


def _widen(row: int, spec: LanguageSpec, lines: list[str]) -> int:
    """The 0-based first line of a symbol starting at `row`, moved up over the comment lines
    and (C++) Unreal macro lines right above it (no blank line between)."""
    while row > 0:
        above = lines[row - 1].strip()
        doc = above.startswith(spec.comment_prefixes)
        macro = spec is CPP and UNREAL_LINE.match(above) is not None
        if not above or not (doc or macro):
            break
        row -= 1
    return row


def _count_errors(node: Any) -> int:
    if not node.has_error:
        return 0
    count = int(node.type == "ERROR" or node.is_missing)
    return count + sum(_count_errors(child) for child in node.children)
