"""A code file → units: one per function, method, class or struct (`symbols.py`), the lines
outside them as windows, and the whole file as windows when no grammar reads it or it does
not parse. A unit's heading path is `file > class > method`, its `anchor` the symbol
(`AMyActor::BeginPlay`), its lines the real ones (`path:line-line` citations). The halves of a
C/C++ `.h`/`.cpp` pair know each other (`pairs.py`).

Guarded before any parsing, each a warning (shown by `vault-rag status`) and no units: a file
over `max_code_kb` (`too_large`), NUL bytes (`binary`), text that is neither UTF-8 nor marked
UTF-16/32 by a BOM (`unknown_encoding`), lines so long the file is minified or generated
(`minified`)."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from pathlib import Path

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.chunking.pipeline import NoteChunks
from vault_rag.chunking.types import Chunk
from vault_rag.settings import Settings
from vault_rag.sources.base import make_unit
from vault_rag.sources.code.languages import CODE_SUFFIXES, UNREAL_LINE, parser_for, spec_for
from vault_rag.sources.code.pairs import link_pair, with_declarations
from vault_rag.sources.code.symbols import Symbol, parse_symbols
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import resolve_inside
from vault_rag.vault.types import ResolvedNote, VaultWarning

KIND = "code"
# This kind's own chunker version (`chunking/pipeline.py`, `kind_versions`): bumping it re-chunks
# the code files of every index and no note.
# 1: the units of a C/C++ header list the functions they declare (`declares`, `pairs.py`).
CODE_UNITS_VERSION = "1"
MINIFIED_LINE_CHARS = 5000  # one line this long: generated or minified, not read
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class CodeKind:
    name = KIND
    suffixes = CODE_SUFFIXES
    version = CODE_UNITS_VERSION

    def __init__(self, max_kb: float = 1024.0) -> None:
        self.max_bytes = int(max_kb * 1024)

    @classmethod
    def from_settings(cls, settings: Settings) -> CodeKind:
        return cls(settings.max_code_kb)

    def units(
        self, vault_root: Path, rel: str, notes: NoteIndex, options: ChunkOptions
    ) -> NoteChunks:
        note = ResolvedNote(path=rel, text="")
        text, problem = self._read(resolve_inside(vault_root, rel))
        if problem is not None:
            note.warnings.append(VaultWarning(problem[0], problem[1], rel))
            return NoteChunks(note=note)
        note.text = text
        units, partner = link_pair(vault_root, rel, code_units(rel, text, options), self._read)
        if partner:  # editing either half of a .h/.cpp pair re-reads the other
            note.dependencies = [partner]
        return NoteChunks(note=note, chunks=units)

    def read(self, path: Path) -> tuple[str, tuple[str, str] | None]:
        """A file's text through this kind's guards, or ("", (warning code, message))."""
        return self._read(path)

    def _read(self, path: Path) -> tuple[str, tuple[str, str] | None]:
        try:
            size = path.stat().st_size
            if size > self.max_bytes:
                return "", (
                    "too_large",
                    f"{size / 1024:.0f} KB, over max_code_kb ({self.max_bytes // 1024} KB): "
                    "not read",
                )
            raw = path.read_bytes()
        except OSError as exc:
            return "", ("unreadable", f"cannot read it: {exc.strerror or exc}")
        text = decode(raw)
        if text is None:
            if b"\x00" in raw[:8192]:
                return "", ("binary", "holds NUL bytes: a binary file, not read")
            return "", (
                "unknown_encoding",
                "neither UTF-8 nor UTF-16/32 with a byte-order mark: save it as UTF-8 to index it",
            )
        if any(len(line) > MINIFIED_LINE_CHARS for line in text.splitlines()):
            return "", (
                "minified",
                f"a line longer than {MINIFIED_LINE_CHARS} characters: minified or "
                "generated, not read",
            )
        return text, None


def decode(raw: bytes) -> str | None:
    """The text of a source file: a BOM's encoding, else strict UTF-8 without NUL bytes."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError:
                return None
    if b"\x00" in raw:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def code_units(rel: str, text: str, options: ChunkOptions) -> list[Chunk]:
    """The units of one code file's text (see the module doc)."""
    lines = text.splitlines()
    spec = spec_for(rel)
    parser = parser_for(spec) if spec is not None else None
    symbols: list[Symbol] = []
    if spec is not None and parser is not None:
        parsed = parse_symbols(parser, spec, text.encode("utf-8"), lines)
        symbols = parsed.symbols
    language = spec.name if spec is not None else rel.rsplit(".", 1)[-1].lower()
    prefixes = spec.comment_prefixes if spec is not None else ()
    builder = _Builder(rel, lines, options.measure(), options.target_max, language, prefixes)
    for symbol in symbols:
        builder.symbol(symbol)
    covered = {n for s in symbols for n in range(s.start, s.end + 1)}
    builder.rest(covered)
    if spec is not None and parser is not None:
        return with_declarations(rel, text, builder.units, parser)
    return builder.units


class _Builder:
    def __init__(
        self,
        rel: str,
        lines: list[str],
        measure: Callable[[str], int],
        target_max: int,
        language: str,
        doc_prefixes: tuple[str, ...],
    ) -> None:
        self.rel, self.lines, self.measure = rel, lines, measure
        self.target_max, self.language = target_max, language
        # a nested symbol's signature is its first line that is no doc, attribute or macro
        self.not_signature = (*doc_prefixes, "@", "#")
        self.title = rel.rsplit("/", 1)[-1]
        self.units: list[Chunk] = []

    def symbol(self, symbol: Symbol) -> None:
        rows: list[tuple[int, str]] = []
        skip_until = 0
        for number in range(symbol.start, symbol.end + 1):
            if number <= skip_until:
                continue
            inner = next((r for r in symbol.nested if r[0] == number), None)
            if inner is not None:  # a nested symbol (its own unit): its signature line only
                rows.append((number, self._signature(inner) + " …"))
                skip_until = inner[1]
                continue
            rows.append((number, self.lines[number - 1]))
        extra = {"symbol": symbol.name, "symbol_kind": symbol.kind, "language": self.language}
        self._emit(rows, (self.rel, *symbol.path), symbol.name, extra)

    def rest(self, covered: set[int]) -> None:
        """The lines outside every symbol (includes, globals, a file no grammar reads)."""
        group: list[tuple[int, str]] = []
        for number, line in enumerate(self.lines, start=1):
            if number in covered:
                self._flush(group)
                group = []
            else:
                group.append((number, line))
        self._flush(group)

    def _flush(self, group: list[tuple[int, str]]) -> None:
        if any(line.strip() for _, line in group):
            extra = {"symbol": "", "symbol_kind": "lines", "language": self.language}
            self._emit(group, (self.rel,), f"L{group[0][0]}", extra)

    def _signature(self, span: tuple[int, int]) -> str:
        for number in range(span[0], span[1] + 1):
            line = self.lines[number - 1]
            stripped = line.strip()
            doc = stripped.startswith(self.not_signature) or UNREAL_LINE.match(stripped)
            if stripped and not doc:
                return line.rstrip()
        return self.lines[span[0] - 1].rstrip()

    def _emit(
        self, rows: list[tuple[int, str]], heading: tuple[str, ...], anchor: str, extra: dict
    ) -> None:
        parts = self._split(rows)
        for part_no, part in enumerate(parts, start=1):
            label = (
                heading if len(parts) == 1 else (*heading[:-1], f"{heading[-1]} (part {part_no})")
            )
            while part and not part[-1][1].strip():
                part = part[:-1]
            if not part:
                continue
            self.units.append(
                make_unit(
                    path=self.rel,
                    kind=KIND,
                    title=self.title,
                    text="\n".join(line for _, line in part),
                    heading=label,
                    anchor=anchor,
                    ordinal=len(self.units),
                    line_start=part[0][0],
                    line_end=part[-1][0],
                    extra={**extra, "part": part_no if len(parts) > 1 else 0},
                )
            )

    def _split(self, rows: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
        """`rows` as parts of at most `target_max` (a single over-long line stays whole)."""
        if self.measure("\n".join(line for _, line in rows)) <= self.target_max:
            return [rows]
        parts: list[list[tuple[int, str]]] = [[]]
        size = 0
        for row in rows:
            cost = self.measure(row[1]) + 1
            if parts[-1] and size + cost > self.target_max:
                parts.append([])
                size = 0
            parts[-1].append(row)
            size += cost
        return parts
