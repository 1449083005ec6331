"""Real PDFs made by the test suite itself with reportlab (a test dependency): text pages with
and without an outline, CJK text (reportlab's built-in STSong-Light CID font, no font file),
encrypted, truncated and image-only files. Also used by benchmarks/pdf.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen.canvas import Canvas

CJK_FONT = "STSong-Light"
pdfmetrics.registerFont(UnicodeCIDFont(CJK_FONT))

# One page: (outline title or None, [paragraphs]); a paragraph starting with "# " is drawn as a
# larger heading line.
Page = tuple[str | None, Sequence[str]]


def _has_cjk(text: str) -> bool:
    return any("\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef" for ch in text)


def write_pdf(
    path: Path, pages: Sequence[Page], *, password: str | None = None, title: str = ""
) -> Path:
    """A text PDF: each page's paragraphs wrapped to the page width, one blank line apart."""
    encrypt = None
    if password is not None:
        from reportlab.lib.pdfencrypt import StandardEncryption

        encrypt = StandardEncryption(password, ownerPassword=password + "-owner")
    canvas = Canvas(str(path), pagesize=A4, encrypt=encrypt)
    if title:
        canvas.setTitle(title)
    width, height = A4
    for number, (outline, paragraphs) in enumerate(pages, start=1):
        if outline:
            key = f"p{number}"
            canvas.bookmarkPage(key)
            canvas.addOutlineEntry(outline, key, level=0)
        y = height - 72
        for paragraph in paragraphs:
            heading = paragraph.startswith("# ")
            text = paragraph[2:] if heading else paragraph
            font = CJK_FONT if _has_cjk(text) else ("Helvetica-Bold" if heading else "Helvetica")
            size = 16 if heading else 11
            lines = (
                _cjk_lines(text, 40)
                if _has_cjk(text)
                else simpleSplit(text, font, size, width - 144)
            )
            for line in lines:
                if y < 72:  # the page is full: the paragraph runs on to the next page
                    canvas.showPage()
                    y = height - 72
                canvas.setFont(font, size)
                canvas.drawString(72, y, line)
                y -= size * 1.4
            y -= size  # a blank line between paragraphs
        canvas.showPage()
    canvas.save()
    return path


def _cjk_lines(text: str, per_line: int) -> list[str]:
    """`per_line` characters a line, as CJK text wraps anywhere; a Latin word (`Perforce`,
    `binary+l`) is not cut: the line ends before it, as a typesetter would."""
    lines: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + per_line, len(text))
        if end < len(text) and _in_word(text, end):
            word = end
            while word > start and _in_word(text, word):
                word -= 1
            end = word if word > start else end
        lines.append(text[start:end])
        start = end
    return lines


def _in_word(text: str, i: int) -> bool:
    """Whether a break before text[i] would cut a run of ASCII non-space characters."""
    return i > 0 and all(c.isascii() and not c.isspace() for c in (text[i - 1], text[i]))


def write_image_only_pdf(path: Path, pages: int = 2) -> Path:
    """Pages with drawings and no text at all: what a scan without OCR looks like."""
    canvas = Canvas(str(path), pagesize=A4)
    for _ in range(pages):
        canvas.rect(72, 72, 300, 400, fill=1)
        canvas.circle(300, 600, 50, fill=0)
        canvas.showPage()
    canvas.save()
    return path


def write_truncated_pdf(path: Path, source: Path, keep: float = 0.4) -> Path:
    """The first `keep` share of a real PDF's bytes (a download or copy cut short)."""
    data = source.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path
