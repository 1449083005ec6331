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
# Nodes walked through as if their children were the parent's (see also each language's own).
_TRANSPARENT = frozenset(
    {"linkage_specification", "declaration_list", "preproc_if", "preproc_ifdef", "ERROR"}
)
# Nodes whose symbol is inside: a decorator or `template<…>` belongs to the unit.
_WRAPPERS = frozenset({"decorated_definition", "template_declaration"})
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_GO_SHAPES = frozenset({"struct_type", "interface_type"})
# A symbol node's kind word (`symbol_kind`); any node not named here is a function.
_KIND_WORDS = {
    **dict.fromkeys(
        ("class_specifier", "class_definition", "class_declaration", "abstract_class_declaration"),
        "class",
    ),
    **dict.fromkeys(("struct_specifier", "struct_declaration", "struct_item"), "struct"),
    **dict.fromkeys(("union_specifier", "union_item"), "union"),
    **dict.fromkeys(("enum_specifier", "enum_declaration", "enum_item"), "enum"),
    **dict.fromkeys(("interface_declaration", "annotation_type_declaration"), "interface"),
    "record_declaration": "record",
    "trait_item": "trait",
}


@dataclass
class Symbol:
    kind: str  # function | class | struct | union | enum | interface | record | trait
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
    return ParsedFile(symbols_of(tree.root_node, spec, lines), count_errors(tree.root_node))


def symbols_of(root: Any, spec: LanguageSpec, lines: list[str]) -> list[Symbol]:
    """The symbols under a parsed tree's `root` (the source parsed as `parse_symbols` does:
    C/C++ with its macros blanked); `relations.py` walks the same tree for its edges."""
    found: list[Symbol] = []
    _walk(root, spec, (), found, None, lines)
    return found


def declarations(
    parser: Any, spec: LanguageSpec, source: bytes, lines: list[str]
) -> dict[tuple[str, ...], tuple[int, int]]:
    """C/C++: the functions declared without a body (`void Tick(float);` in a class, a free
    prototype), by name path (`AMyActor`, `Tick`) → their lines, widened over the doc comment
    and Unreal macros above (the header half of a `.h`/`.cpp` pair, `pairs.py`)."""
    tree = parser.parse(blank_macros(source))
    found: dict[tuple[str, ...], tuple[int, int]] = {}
    _declared(tree.root_node, spec, (), found, lines)
    return found


def _declared(
    node: Any,
    spec: LanguageSpec,
    parents: tuple[str, ...],
    found: dict[tuple[str, ...], tuple[int, int]],
    lines: list[str],
) -> None:
    for child in node.named_children:
        target = child
        if child.type == "template_declaration":
            target = child.named_children[-1] if child.named_children else child
        kind = target.type
        if kind in ("field_declaration", "declaration"):
            name = _declared_name(target)
            if name:
                start = _widen(child.start_point[0], spec, lines) + 1
                found.setdefault((*parents, *name), (start, child.end_point[0] + 1))
        elif kind in ("class_specifier", "struct_specifier") and _body(target) is not None:
            _declared(_body(target), spec, (*parents, *_name_path(target)), found, lines)
        elif kind in spec.containers:
            inside = _body(target) or target
            _declared(inside, spec, (*parents, _container_name(target)), found, lines)
        elif kind in _TRANSPARENT:
            _declared(child, spec, parents, found, lines)


def _declared_name(node: Any) -> tuple[str, ...]:
    """The name of the function a declaration declares (through `*`/`&` declarators), or ()."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return ()
    name = declarator.child_by_field_name("declarator")
    if name is None or name.type not in _NAME_TYPES:
        return ()
    return tuple(part.strip() for part in _text(name).split("::") if part.strip())


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
        if kind in _WRAPPERS:
            inner = child.child_by_field_name("definition") or _last_symbol(child, spec)
            if inner is None:
                _walk(child, spec, parents, found, owner, lines)
                continue
            target, kind = inner, inner.type
        body = _body(target) if kind in spec.symbols else None
        if body is not None:
            symbol = Symbol(
                _kind_word(target),
                (*parents, *_owner_type(target), *_name_path(target)),
                _widen(child.start_point[0], spec, lines) + 1,
                child.end_point[0] + 1,
            )
            found.append(symbol)
            if owner is not None:
                owner.nested.append((symbol.start, symbol.end))
            if symbol.kind != "function":
                _walk(body, spec, symbol.path, found, symbol, lines)
        elif kind in spec.containers:
            label = _container_name(target)
            inside = _body(target) or target  # C#'s `namespace N;` holds what follows it
            _walk(inside, spec, (*parents, label), found, owner, lines)
        elif kind in _TRANSPARENT or kind in spec.transparent:
            _walk(child, spec, parents, found, owner, lines)


def _last_symbol(node: Any, spec: LanguageSpec) -> Any | None:
    for child in reversed(node.named_children):
        if child.type in spec.symbols:
            return child
    return None


def _body(node: Any) -> Any | None:
    """The part of a symbol that makes it a definition (a declaration has none: no unit)."""
    if node.type in ("lexical_declaration", "variable_declaration"):
        bound = _bound_function(node)
        return None if bound is None else bound[1].child_by_field_name("body")
    if node.type == "type_spec":  # Go: `type Circle struct {…}`; `type ID int` is no unit
        shape = node.child_by_field_name("type")
        return shape if shape is not None and shape.type in _GO_SHAPES else None
    for name in _BODY_FIELDS:
        body = node.child_by_field_name(name)
        if body is not None:
            return body
    return None


def _bound_function(node: Any) -> tuple[Any, Any] | None:
    """JS/TS `const f = (x) => …` / `= function …`: (its declarator, the function)."""
    for declarator in node.named_children:
        if declarator.type != "variable_declarator":
            continue
        value = declarator.child_by_field_name("value")
        if value is not None and value.type in _FUNCTION_VALUES:
            return declarator, value
    return None


def _owner_type(node: Any) -> tuple[str, ...]:
    """Go: a method's receiver type (`func (c *Circle) Area()` → `Circle`)."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ()
    name = _first_type(receiver)
    return (name,) if name else ()


def _container_name(node: Any) -> str:
    name = node.child_by_field_name("name")
    if name is not None:
        return _text(name)
    shape = node.child_by_field_name("type")  # Rust: `impl Display for Stack<T>` → Stack
    return (_first_type(shape) if shape is not None else "") or "(anonymous)"


def _first_type(node: Any) -> str:
    """The first type name in `node` (`*Circle` → Circle, `Stack<T>` → Stack)."""
    if node.type == "type_identifier":
        return _text(node)
    for child in node.named_children:
        if child.type == "type_arguments":
            continue
        name = _first_type(child)
        if name:
            return name
    return ""


def _name_path(node: Any) -> tuple[str, ...]:
    if node.type in ("lexical_declaration", "variable_declaration"):
        bound = _bound_function(node)
        name = bound[0].child_by_field_name("name") if bound is not None else None
    else:
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


def _kind_word(node: Any) -> str:
    if node.type == "type_spec":
        shape = node.child_by_field_name("type")
        return "interface" if shape is not None and shape.type == "interface_type" else "struct"
    return _KIND_WORDS.get(node.type, "function")


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


def count_errors(node: Any) -> int:
    if not node.has_error:
        return 0
    count = int(node.type == "ERROR" or node.is_missing)
    return count + sum(count_errors(child) for child in node.children)
