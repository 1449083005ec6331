"""The languages a code source parses: file suffix → tree-sitter grammar and the node types
that are symbols. Each grammar is its own PyPI wheel with the compiled parser inside
(`tree-sitter-cpp`, `tree-sitter-python`, …), so nothing is downloaded at run time; a grammar
that is not installed leaves its files to line windows (`kind.py`)."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class LanguageSpec:
    name: str  # the `language` of a unit
    module: str  # the grammar wheel's module
    function: str  # its function returning the language pointer
    symbols: frozenset[str]  # node types that become units (with a body, see symbols.py)
    containers: frozenset[str]  # node types whose name joins the heading path, no unit
    comment_prefixes: tuple[str, ...]  # lines above a symbol that belong to it (its doc)
    # Nodes walked through as if their children were the parent's (`export_statement`, Go's
    # `type_declaration` holding `type_spec`s, …), on top of symbols.py's shared ones.
    transparent: frozenset[str] = frozenset()


_C_COMMENTS = ("//", "/*", "*", "*/")
C = LanguageSpec(
    "c",
    "tree_sitter_c",
    "language",
    frozenset({"function_definition", "struct_specifier", "union_specifier", "enum_specifier"}),
    frozenset(),
    _C_COMMENTS,
)
CPP = LanguageSpec(
    "cpp",
    "tree_sitter_cpp",
    "language",
    C.symbols | {"class_specifier"},
    frozenset({"namespace_definition"}),
    _C_COMMENTS,
)
PYTHON = LanguageSpec(
    "python",
    "tree_sitter_python",
    "language",
    frozenset({"function_definition", "class_definition"}),
    frozenset(),
    ("#",),
)
_JS_SYMBOLS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        "class_declaration",
        # `const f = (x) => …`: a function bound to a name (symbols.py reads the declarator)
        "lexical_declaration",
        "variable_declaration",
    }
)
JAVASCRIPT = LanguageSpec(
    "javascript",
    "tree_sitter_javascript",
    "language",
    _JS_SYMBOLS,
    frozenset(),
    _C_COMMENTS,
    frozenset({"export_statement"}),
)
_TS_SYMBOLS = _JS_SYMBOLS | {
    "abstract_class_declaration",
    "interface_declaration",
    "enum_declaration",
}
# `namespace N {}` is an `internal_module` inside an `expression_statement`.
_TS_CONTAINERS = frozenset({"internal_module", "module"})
TYPESCRIPT = LanguageSpec(
    "typescript",
    "tree_sitter_typescript",
    "language_typescript",
    _TS_SYMBOLS,
    _TS_CONTAINERS,
    _C_COMMENTS,
    frozenset({"export_statement", "expression_statement"}),
)
TSX = LanguageSpec(
    "tsx",
    "tree_sitter_typescript",
    "language_tsx",
    _TS_SYMBOLS,
    _TS_CONTAINERS,
    _C_COMMENTS,
    frozenset({"export_statement", "expression_statement"}),
)
CSHARP = LanguageSpec(
    "csharp",
    "tree_sitter_c_sharp",
    "language",
    frozenset(
        {
            "class_declaration",
            "struct_declaration",
            "interface_declaration",
            "record_declaration",
            "enum_declaration",
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "operator_declaration",
            "local_function_statement",
        }
    ),
    frozenset({"namespace_declaration", "file_scoped_namespace_declaration"}),
    ("//", "/*", "*", "*/", "["),  # `[Obsolete]` attributes belong to what follows
)
GO = LanguageSpec(
    "go",
    "tree_sitter_go",
    "language",
    # a method's receiver type joins its heading path (`Circle > Area`, symbols.py)
    frozenset({"function_declaration", "method_declaration", "type_spec"}),
    frozenset(),
    ("//", "/*", "*", "*/"),
    frozenset({"type_declaration"}),
)
JAVA = LanguageSpec(
    "java",
    "tree_sitter_java",
    "language",
    frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
            "method_declaration",
            "constructor_declaration",
        }
    ),
    frozenset(),
    ("//", "/*", "*", "*/", "@"),  # `@Override` annotations belong to what follows
)
RUST = LanguageSpec(
    "rust",
    "tree_sitter_rust",
    "language",
    frozenset({"function_item", "struct_item", "enum_item", "union_item", "trait_item"}),
    # `impl Stack<T> { fn push … }` and `mod util { … }`: methods read `Stack > push`
    frozenset({"impl_item", "mod_item"}),
    ("//", "/*", "*", "*/", "#["),  # `#[derive(…)]` attributes belong to what follows
)

# `.h` is read as C++: a C header parses as C++ too, and Unreal's headers are C++.
BY_SUFFIX: dict[str, LanguageSpec] = {
    **dict.fromkeys((".c",), C),
    **dict.fromkeys((".h", ".hh", ".hpp", ".hxx", ".cc", ".cpp", ".cxx", ".inl", ".ipp"), CPP),
    **dict.fromkeys((".py", ".pyi"), PYTHON),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs"), JAVASCRIPT),
    **dict.fromkeys((".ts", ".mts", ".cts"), TYPESCRIPT),
    **dict.fromkeys((".tsx",), TSX),
    **dict.fromkeys((".cs",), CSHARP),
    **dict.fromkeys((".go",), GO),
    **dict.fromkeys((".java",), JAVA),
    **dict.fromkeys((".rs",), RUST),
}
LANGUAGES = (C, CPP, PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, CSHARP, GO, JAVA, RUST)
# Text files of a code tree read as line windows (no grammar here). `.build.cs` is Unreal's
# module rules: C#, but listed so the walk keeps it whatever the grammar table says.
PLAIN_SUFFIXES = (
    ".kt", ".swift", ".m", ".mm", ".lua", ".sh", ".cmake", ".ini", ".toml", ".yaml", ".yml",
    ".json", ".txt", ".md", ".rst", ".usf", ".ush", ".hlsl", ".glsl", ".build.cs", ".uplugin",
    ".uproject",
)  # fmt: skip
CODE_SUFFIXES = tuple(sorted(set(BY_SUFFIX) | set(PLAIN_SUFFIXES)))


def spec_for(rel: str) -> LanguageSpec | None:
    lower = rel.lower()
    for suffix, spec in BY_SUFFIX.items():
        if lower.endswith(suffix):
            return spec
    return None


@cache
def parser_for(spec: LanguageSpec) -> Any | None:
    """A tree-sitter parser for the language, or None when its grammar is not installed."""
    try:
        from tree_sitter import Language, Parser

        grammar = importlib.import_module(spec.module)
    except ImportError:
        return None
    return Parser(Language(getattr(grammar, spec.function)()))


# Unreal's reflection macros and `<MODULE>_API` export macros are not C++ to a parser:
# `class MYGAME_API AMyActor : public AActor` would read as a class named `MYGAME_API`. They
# are blanked with spaces of the same length before parsing (byte offsets and lines stay), and
# kept in the units' text, where `UFUNCTION(BlueprintCallable)` is worth finding.
# Also blanked: `DECLARE_*(…);` delegate/log/stat macros at file level (a `Type*, Name` argument
# list is no C++ either) and the inlining and deprecation words in front of a function.
_UNREAL_MACRO = re.compile(
    rb"\b(?:UCLASS|USTRUCT|UENUM|UINTERFACE|UFUNCTION|UPROPERTY|UDELEGATE|UMETA|UPARAM"
    rb"|GENERATED_BODY|GENERATED_UCLASS_BODY|GENERATED_USTRUCT_BODY|GENERATED_IINTERFACE_BODY"
    rb"|UE_DEPRECATED|DECLARE_[A-Za-z0-9_]+)"
    rb"\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)(?:[ \t]*;)?"
    rb"|\b[A-Z][A-Z0-9_]*_API\b"
    rb"|\b(?:FORCEINLINE|FORCENOINLINE|FORCEINLINE_DEBUGGABLE|UE_NODISCARD)\b"
)
UNREAL_LINE = re.compile(r"^\s*U(?:CLASS|STRUCT|ENUM|INTERFACE|FUNCTION|PROPERTY|DELEGATE)\s*\(")


def blank_macros(source: bytes) -> bytes:
    """`source` with Unreal's macros and mid-list conditional directives replaced by spaces
    (newlines inside them kept)."""
    source = _UNREAL_MACRO.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), source)
    return blank_inline_directives(source)


# tree-sitter-cpp reads `#if`/`#else`/`#endif` between declarations and statements, not inside a
# list: LevelDB's `Limiter(int n) :\n#if !defined(NDEBUG)\n max_(n),\n#endif\n allowed_(n) {`
# breaks the parse, and every later class of the file gets a wrong path. A conditional line
# whose previous code line ends inside a list (`,`, `(`, or a `:` that is no label) is blanked;
# both branches' code stays, which a parser reads as one longer list.
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b")
_LABEL = re.compile(rb"^\s*(?:public|private|protected|default|case\b.*)\s*:$")


def blank_inline_directives(source: bytes) -> bytes:
    """`source` with the conditional directives inside a list blanked (see above)."""
    if b"#" not in source:
        return source
    lines = source.split(b"\n")
    previous = b""  # the last code line, comments and directives skipped
    for i, line in enumerate(lines):
        if _DIRECTIVE.match(line):
            if previous.endswith((b",", b"(")) or (
                previous.endswith(b":")
                and not previous.endswith(b"::")
                and not _LABEL.match(previous)
            ):
                lines[i] = re.sub(rb"[^\r]", b" ", line)
            continue
        code = line.split(b"//", 1)[0].rstrip()
        if code and not code.lstrip().startswith((b"#", b"/*", b"*")):
            previous = code
    return b"\n".join(lines)
