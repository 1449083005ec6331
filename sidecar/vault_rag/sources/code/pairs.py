"""C/C++ `.h`/`.cpp` pairs: a method declared in a header and defined in a source file.

The partner of a file is the first that exists of: the same name with the other family's
suffix in the same folder, then in the mirrored folder of the usual layouts (Unreal's
`Public/` or `Classes/` ↔ `Private/`, `include/` ↔ `src/`). When a pair is found:

- every symbol unit of both files records the other file (`related_file`), and each file
  depends on the other in the manifest, so editing the header re-reads the source file;
- a definition in the source file (`void AMyActor::Tick(…) {…}`, whose heading path already
  names the class) that the header declares records where (`declared_at`, `path:line-line`) and
  embeds the declaration with its doc comment and Unreal macro
  (`UFUNCTION(BlueprintCallable)` is written in the header, the body in the .cpp). Unreal's RPC
  bodies `X_Implementation` / `X_Validate` are matched to the declaration of `X`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from vault_rag.chunking.types import Chunk
from vault_rag.sources.code.languages import CPP, C, parser_for, spec_for
from vault_rag.sources.code.symbols import declarations
from vault_rag.vault.paths import UnsafePathError, resolve_inside

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx")
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")
_MIRRORS = (("Public", "Private"), ("Classes", "Private"), ("include", "src"))
_RPC_SUFFIXES = ("_Implementation", "_Validate")
_TEMPLATE_ARGS = re.compile(r"<.*>")

Reader = Callable[[Path], tuple[str, tuple[str, str] | None]]


def partners(rel: str) -> list[str]:
    """Where `rel`'s partner may be, most likely first (paths relative to the source root)."""
    folder, _, name = rel.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        return []
    suffix = "." + suffix.lower()
    if suffix in HEADER_SUFFIXES:
        others, mirrors = SOURCE_SUFFIXES, list(_MIRRORS)
    elif suffix in SOURCE_SUFFIXES:
        others, mirrors = HEADER_SUFFIXES, [(b, a) for a, b in _MIRRORS]
    else:
        return []
    folders = [folder]
    parts = folder.split("/") if folder else []
    for here, there in mirrors:
        # the last matching segment: `Source/Mod/Public/Sub` → `Source/Mod/Private/Sub`
        for i in range(len(parts) - 1, -1, -1):
            if parts[i] == here:
                folders.append("/".join([*parts[:i], there, *parts[i + 1 :]]))
                break
    found: list[str] = []
    for where in folders:
        for other in others:
            candidate = f"{where}/{stem}{other}" if where else f"{stem}{other}"
            if candidate not in found:
                found.append(candidate)
    return found


def find_partner(root: Path, rel: str) -> str | None:
    for candidate in partners(rel):
        try:
            if resolve_inside(root, candidate).is_file():
                return candidate
        except UnsafePathError:  # a symlink out of the root: no partner there
            continue
    return None


def link_pair(root: Path, rel: str, units: list[Chunk], read: Reader) -> tuple[list[Chunk], str]:
    """`units` of `rel` with their partner recorded (see the module doc), and the partner's
    path ("" when there is none or it cannot be read)."""
    spec = spec_for(rel)
    if spec not in (C, CPP):
        return units, ""
    partner = find_partner(root, rel)
    if partner is None:
        return units, ""
    text, problem = read(resolve_inside(root, partner))
    if problem is not None:
        return units, ""
    is_source = rel.lower().endswith(SOURCE_SUFFIXES)
    declared: dict[tuple[str, ...], tuple[int, int]] = {}
    if is_source:
        parser = parser_for(CPP)
        if parser is not None:
            declared = declarations(parser, CPP, text.encode("utf-8"), text.splitlines())
    partner_lines = text.splitlines()
    linked = []
    for unit in units:
        if not unit.extra.get("symbol"):
            linked.append(unit)
            continue
        extra = {**unit.extra, "related_file": partner}
        span = _declaration_for(str(unit.extra["symbol"]), declared) if is_source else None
        if span is None:
            linked.append(dataclasses.replace(unit, extra=extra))
            continue
        extra["declared_at"] = f"{partner}:{span[0]}-{span[1]}"
        declaration = "\n".join(partner_lines[span[0] - 1 : span[1]])
        embed_text = f"{unit.embed_text}\n\nDeclared in {partner}:\n{declaration}"
        linked.append(
            dataclasses.replace(
                unit,
                extra=extra,
                embed_text=embed_text,
                content_hash=hashlib.sha256(embed_text.encode("utf-8")).hexdigest(),
            )
        )
    return linked, partner


def with_declarations(rel: str, text: str, units: list[Chunk], parser: object) -> list[Chunk]:
    """A C/C++ header's units, each with the functions declared in its lines (`declares`:
    `Class::method` or `function`, the last two names), so a search that finds the declaration
    can rank the definition with it (`retrieval/code_files.py`); other files' units as they are.

    A window of lines that opens outside every declaration and follows one with no symbol
    between opens with that declaration's documentation (zlib.h writes the comment after the
    prototype), so it lists that declaration too."""
    if not rel.lower().endswith(HEADER_SUFFIXES) or spec_for(rel) not in (C, CPP):
        return units
    declared = declarations(parser, CPP, text.encode("utf-8"), text.splitlines())
    spans = sorted((span, declaration_key(path)) for path, span in declared.items())
    symbol_starts = [u.line_start for u in units if u.extra.get("symbol")]
    marked = []
    for unit in units:
        names = {
            key for (start, end), key in spans if start <= unit.line_end and end >= unit.line_start
        }
        opens_inside = any(start <= unit.line_start <= end for (start, end), _ in spans)
        if not opens_inside and unit.extra.get("symbol_kind") == "lines":
            above = [(end, key) for (_, end), key in spans if end < unit.line_start]
            if above:
                last = max(end for end, _ in above)
                between = any(last < start < unit.line_start for start in symbol_starts)
                if not between:
                    names |= {key for end, key in above if end == last}
        marked.append(
            dataclasses.replace(unit, extra={**unit.extra, "declares": sorted(names)})
            if names
            else unit
        )
    return marked


def declaration_key(path: tuple[str, ...] | list[str]) -> str:
    """How a declaration and a definition meet: the last two names (`DBImpl::Write`, a class
    and its method, or `leveldb::NewDBIterator`), template arguments left out; one name for a
    function outside any namespace or class (`deflate`)."""
    parts = [_TEMPLATE_ARGS.sub("", part) for part in path if part != "(anonymous)"]
    return "::".join(parts[-2:])


def _declaration_for(
    symbol: str, declared: dict[tuple[str, ...], tuple[int, int]]
) -> tuple[int, int] | None:
    """The header lines declaring a definition named `A::B::f` (or `ns::A::f`, or an RPC
    body `A::f_Implementation`): matched on its last two names, class and method."""
    path = tuple(symbol.split("::"))
    if len(path) < 2:
        return None
    owner, name = path[-2], path[-1]
    names = [name] + [name[: -len(s)] for s in _RPC_SUFFIXES if name.endswith(s)]
    for candidate in names:
        for key, span in declared.items():
            if key[-2:] == (owner, candidate):
                return span
    return None
