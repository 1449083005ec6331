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

# `.h` is read as C++: a C header parses as C++ too, and Unreal's headers are C++.
BY_SUFFIX: dict[str, LanguageSpec] = {
    **dict.fromkeys((".c",), C),
    **dict.fromkeys((".h", ".hh", ".hpp", ".hxx", ".cc", ".cpp", ".cxx", ".inl", ".ipp"), CPP),
    **dict.fromkeys((".py", ".pyi"), PYTHON),
}
# Text files of a code tree read as line windows (no grammar here).
PLAIN_SUFFIXES = (
    ".cs", ".go", ".java", ".rs", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".kt", ".swift",
    ".m", ".mm", ".lua", ".sh", ".cmake", ".ini", ".toml", ".yaml", ".yml", ".json", ".txt",
    ".md", ".rst", ".usf", ".ush", ".hlsl", ".glsl", ".build.cs", ".uplugin", ".uproject",
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
_UNREAL_MACRO = re.compile(
    rb"\b(?:UCLASS|USTRUCT|UENUM|UINTERFACE|UFUNCTION|UPROPERTY|UDELEGATE|UMETA|UPARAM"
    rb"|GENERATED_BODY|GENERATED_UCLASS_BODY|GENERATED_USTRUCT_BODY|GENERATED_IINTERFACE_BODY)"
    rb"\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
    rb"|\b[A-Z][A-Z0-9_]*_API\b"
)
UNREAL_LINE = re.compile(r"^\s*U(?:CLASS|STRUCT|ENUM|INTERFACE|FUNCTION|PROPERTY|DELEGATE)\s*\(")


def blank_macros(source: bytes) -> bytes:
    """`source` with Unreal's macros replaced by spaces (newlines inside them kept)."""
    return _UNREAL_MACRO.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), source)
