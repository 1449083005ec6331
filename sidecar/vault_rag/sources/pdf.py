"""PDFs: the text layer, cut into units that stay on their page, cited as `[[file.pdf#page=N]]`.

- Each unit's `anchor` is `page=N`, so every citation path (`[[path#anchor]]`) opens the PDF at
  that page in Obsidian; `extra` holds `kind: pdf`, `page` and `page_end`; `line_start` and
  `line_end` hold the pages too.
- Paragraphs are packed into units up to the chunk target; a unit never crosses a page
  boundary, except that a paragraph running on to the next page (no sentence end at the foot
  of the page, the next page not starting with a heading) ends on that page (`page_end`).
- Headings: the PDF's outline (bookmarks) where it has one; otherwise numbered heading lines
  ("2.3 Linking notes"), a cheap signal that needs no font information.
- A PDF that gives no text is one warning (`pdf_text.PdfProblem`'s code) and no units.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.chunking.pipeline import NoteChunks
from vault_rag.chunking.types import Chunk
from vault_rag.settings import Settings
from vault_rag.sources.base import make_unit
from vault_rag.sources.pdf_text import OutlineEntry, PdfProblem, PdfText, read_pdf
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import resolve_inside
from vault_rag.vault.types import ResolvedNote, VaultWarning

KIND = "pdf"
_SENTENCE_END = re.compile(r"[.!?。！？:：;；)\]）」』\"”]\s*$")
_NUMBERED_HEADING = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(\S.{0,78})$")


@dataclass
class _Para:
    text: str
    page: int
    page_end: int
    heading: tuple[str, ...]


class PdfKind:
    name = KIND
    suffixes = (".pdf",)

    def __init__(self, max_mb: float = 50.0, max_pages: int = 1000) -> None:
        self.max_mb, self.max_pages = max_mb, max_pages

    @classmethod
    def from_settings(cls, settings: Settings) -> PdfKind:
        return cls(settings.max_pdf_mb, settings.max_pdf_pages)

    def units(
        self, vault_root: Path, rel: str, notes: NoteIndex, options: ChunkOptions
    ) -> NoteChunks:
        note = ResolvedNote(path=rel, text="")
        try:
            text = read_pdf(
                resolve_inside(vault_root, rel), max_mb=self.max_mb, max_pages=self.max_pages
            )
        except PdfProblem as problem:
            note.warnings.append(VaultWarning(problem.code, str(problem), rel))
            return NoteChunks(note=note)
        note.text = "\n\n".join(text.pages)
        return NoteChunks(note=note, chunks=pdf_units(rel, text, options))


def pdf_title(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name[:-4] if name.lower().endswith(".pdf") else name


def pdf_units(rel: str, text: PdfText, options: ChunkOptions) -> list[Chunk]:
    """The units of one PDF's text (see the module doc)."""
    measure = options.measure()
    paragraphs = _join_across_pages(_paragraphs(text))
    units: list[Chunk] = []
    ordinals: dict[int, int] = {}
    pending: list[_Para] = []

    def flush() -> None:
        if not pending:
            return
        first = pending[0]
        body = "\n\n".join(p.text for p in pending)
        page_end = max(p.page_end for p in pending)
        ordinal = ordinals.get(first.page, 0)
        ordinals[first.page] = ordinal + 1
        units.append(
            make_unit(
                path=rel,
                kind=KIND,
                title=pdf_title(rel),
                text=body,
                heading=first.heading,
                anchor=f"page={first.page}",
                ordinal=ordinal,
                line_start=first.page,
                line_end=page_end,
                extra={"page": first.page, "page_end": page_end},
            )
        )
        pending.clear()

    size = 0
    for para in paragraphs:
        for piece in _pieces(para, measure, options.target_max):
            piece_size = measure(piece.text)
            same_place = pending and (
                pending[0].page == piece.page and pending[0].heading == piece.heading
            )
            if not same_place or size + piece_size > options.target_max:
                flush()
                size = 0
            pending.append(piece)
            size += piece_size
    flush()
    return units


def _headings_by_page(outline: list[OutlineEntry]) -> dict[int, list[OutlineEntry]]:
    found: dict[int, list[OutlineEntry]] = {}
    for entry in outline:
        found.setdefault(entry.page, []).append(entry)
    return found


def _paragraphs(text: PdfText) -> list[_Para]:
    """Paragraphs of every page, each with the heading path in force where it starts."""
    by_page = _headings_by_page(text.outline)
    path: list[str] = []
    out: list[_Para] = []
    for number, page in enumerate(text.pages, start=1):
        for entry in by_page.get(number, []):  # the outline: every entry starting on this page
            del path[entry.level :]
            path.append(entry.title)
        lines: list[str] = []

        def close(lines: list[str] = lines, number: int = number) -> None:
            if lines:
                out.append(_Para(" ".join(lines), number, number, tuple(path)))
                lines.clear()

        for raw in page.split("\n"):
            line = " ".join(raw.split())
            if not line:
                close()
                continue
            heading = None if text.outline else _NUMBERED_HEADING.match(line)
            if heading and not _SENTENCE_END.search(line):
                close()
                depth = heading.group(1).count(".")
                del path[depth:]
                path.append(line)
                continue
            lines.append(line)
            if _SENTENCE_END.search(line) and len(line) < 60:  # a short last line: paragraph end
                close()
        close()
    return out


def _join_across_pages(paragraphs: list[_Para]) -> list[_Para]:
    """A paragraph that runs on from the foot of a page to the top of the next one is one."""
    first_of: dict[int, int] = {}
    last_of: dict[int, int] = {}
    for i, para in enumerate(paragraphs):
        first_of.setdefault(para.page, i)
        last_of[para.page] = i
    out: list[_Para] = []
    for i, para in enumerate(paragraphs):
        last = out[-1] if out else None
        if (
            last is not None
            and first_of.get(para.page) == i
            and i > 0
            and last_of.get(paragraphs[i - 1].page) == i - 1
            and para.page == last.page_end + 1
            and not _SENTENCE_END.search(last.text)
            and para.heading == last.heading
        ):
            out[-1] = _Para(f"{last.text} {para.text}", last.page, para.page, last.heading)
        else:
            out.append(para)
    return out


def _pieces(para: _Para, measure: Callable[[str], int], limit: int) -> list[_Para]:
    """A paragraph over the target cut at spaces (or anywhere, for text without them)."""
    if measure(para.text) <= limit:
        return [para]
    words = para.text.split(" ") if " " in para.text else list(para.text)
    joiner = " " if " " in para.text else ""
    pieces: list[_Para] = []
    current: list[str] = []
    step = max(1, len(words) // max(2, (measure(para.text) // max(limit, 1)) + 1))
    for start in range(0, len(words), step):
        chunk = words[start : start + step]
        if current and measure(joiner.join(current + chunk)) > limit:
            pieces.append(_Para(joiner.join(current), para.page, para.page_end, para.heading))
            current = []
        current.extend(chunk)
    if current:
        pieces.append(_Para(joiner.join(current), para.page, para.page_end, para.heading))
    return pieces
