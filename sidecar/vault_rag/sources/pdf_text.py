"""A PDF's text layer, page by page, and its outline, with pypdfium2 (PDFium, the engine
Chrome uses). Why PDFium rather than pypdf: docs/benchmarks.md, "PDF text extraction".

Every way a PDF can fail to give text is a `PdfProblem` with a stable code, never another
exception: `encrypted` (a password is needed), `damaged` (PDFium cannot open or read it),
`too_large` (over `max_pdf_mb`: not opened), `too_many_pages` (over `max_pdf_pages`: not
read) and `no_text_layer` (pages without text: scanned images; OCR is not done).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from vault_rag.sources.pdf_fonts import install_fallback_fonts

# PDFium is not thread-safe: one document at a time per process.
_LOCK = threading.Lock()
# Before any document is opened: CJK text whose font is neither embedded nor installed keeps
# every character (pdf_fonts.py).
install_fallback_fonts()


class PdfProblem(Exception):
    """Why a PDF gave no text: `code` is the warning code, `args[0]` the sentence."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class OutlineEntry:
    title: str
    level: int  # 0: top level
    page: int  # 1-based page the entry points at


@dataclass
class PdfText:
    pages: list[str]  # text of each page (1-based page n is pages[n - 1]), "\n" line breaks
    outline: list[OutlineEntry] = field(default_factory=list)


def read_pdf(path: Path, *, max_mb: float, max_pages: int) -> PdfText:
    """The text of every page and the outline. Raises `PdfProblem` (see the module doc)."""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise PdfProblem("unreadable", f"cannot read the PDF: {exc.strerror or exc}") from exc
    if size > max_mb * 1024 * 1024:
        raise PdfProblem(
            "too_large",
            f"PDF of {size / 1024 / 1024:.1f} MB is over max_pdf_mb ({max_mb:g}); not read",
        )
    with _LOCK:
        try:
            document = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError as exc:
            raise _open_problem(exc) from exc
        try:
            return _read(document, max_pages)
        except PdfProblem:
            raise
        except Exception as exc:  # PDFium on a damaged page: the file, not the indexer
            raise PdfProblem("damaged", f"PDF could not be read: {exc}") from exc
        finally:
            document.close()


def _open_problem(exc: pdfium.PdfiumError) -> PdfProblem:
    code = getattr(exc, "err_code", None)
    if code == pdfium_c.FPDF_ERR_PASSWORD or "password" in str(exc).lower():
        return PdfProblem("encrypted", "PDF is encrypted (needs a password); not read")
    if code == pdfium_c.FPDF_ERR_SECURITY:
        return PdfProblem("encrypted", "PDF uses an unsupported security handler; not read")
    return PdfProblem("damaged", f"PDF is damaged or not a PDF ({exc}); not read")


def _read(document: pdfium.PdfDocument, max_pages: int) -> PdfText:
    count = len(document)
    if count > max_pages:
        raise PdfProblem(
            "too_many_pages", f"PDF of {count} pages is over max_pdf_pages ({max_pages}); not read"
        )
    pages: list[str] = []
    for index in range(count):
        page = document[index]
        try:
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()
            finally:
                textpage.close()
        finally:
            page.close()
        pages.append(_clean(text))
    if count and not any(p.strip() for p in pages):
        raise PdfProblem(
            "no_text_layer",
            "no text layer (scanned pages or images only): not searchable, OCR is not done",
        )
    return PdfText(pages=pages, outline=_outline(document, count))


def _clean(text: str) -> str:
    """PDFium's line breaks are CRLF; soft hyphens and NULs are dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\x00", "").replace("\xad", "").replace("\ufffe", "")


def _outline(document: pdfium.PdfDocument, count: int) -> list[OutlineEntry]:
    entries: list[OutlineEntry] = []
    try:
        for item in document.get_toc(max_depth=8):
            index = _page_index(item)
            raw_title = (
                item.get_title() if hasattr(item, "get_title") else getattr(item, "title", "")
            )
            title = " ".join((raw_title or "").split())
            if index is None or not title or not 0 <= index < count:
                continue
            entries.append(OutlineEntry(title, int(item.level), index + 1))
    except Exception:  # a broken outline: the pages are still read, without headings
        return []
    return entries


def _page_index(item: object) -> int | None:
    index = getattr(item, "page_index", None)
    if index is None and hasattr(item, "get_dest"):
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
    return index
