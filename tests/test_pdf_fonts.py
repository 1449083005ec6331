"""Issue 40: PDFium dropped CJK text whose font is neither embedded in the PDF nor installed.
A glyph with no font has an empty box, and PDFium skips a text object with no width, so every
object made of one such glyph was lost: the sample PDF's lone `。`, or a whole page whose
characters are each placed on their own. The reader now gives PDFium a fallback font with a
box for every CJK code point (`sources/pdf_fonts.py`, `fonts/glyph-boxes.ttf`).

The machine's fonts must not decide the result: each case runs in a fresh interpreter (PDFium's
font folders are set once per process) with no system font folder at all, standing in for a
machine without CJK fonts, once without the fallback (the old reader: text lost, so the check
can fail) and once with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from pdf_fixtures import CJK_FONT

ROOT = Path(__file__).resolve().parent.parent
LINE = "虚幻引擎的蓝图用节点编写逻辑。"
LONE = "。"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the fallback font is installed on Linux only"
)


def _glyph_by_glyph_pdf(path: Path) -> Path:
    """A page as some generators write CJK: every character its own text object, then a line
    drawn whole, then a line holding only `。` (how the sample PDF's page 2 ends)."""
    canvas = Canvas(str(path), pagesize=A4)
    canvas.setFont(CJK_FONT, 12)
    for i, char in enumerate(LINE):
        canvas.drawString(72 + 12 * i, 760, char)
    canvas.drawString(72, 740, LINE)
    canvas.drawString(72, 720, LONE)
    canvas.showPage()
    canvas.save()
    return path


def _read_in_fresh_process(pdf: Path, *, system_dirs: list[str], with_fallback: bool) -> dict:
    code = f"""
import json
from pathlib import Path
from vault_rag.sources import pdf_fonts
folders = pdf_fonts.install_fallback_fonts({system_dirs!r}, with_fallback={with_fallback!r})
from vault_rag.sources.pdf_text import read_pdf
text = read_pdf(Path({str(pdf)!r}), max_mb=1, max_pages=10).pages[0]
print(json.dumps({{"folders": folders, "text": text}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _squeeze(text: str) -> str:
    return "".join(text.split())


def test_without_fonts_pdfium_drops_one_glyph_objects_and_the_fallback_keeps_them(
    tmp_path: Path,
) -> None:
    pdf = _glyph_by_glyph_pdf(tmp_path / "glyphs.pdf")
    before = _read_in_fresh_process(pdf, system_dirs=[], with_fallback=False)
    # The old reader on a machine without CJK fonts: the glyph-by-glyph line and the lone `。`
    # are gone, only the line drawn whole (its box has width from its advances) is left.
    assert _squeeze(before["text"]) == LINE, before
    after = _read_in_fresh_process(pdf, system_dirs=[], with_fallback=True)
    assert after["folders"] == [str(ROOT / "sidecar" / "vault_rag" / "sources" / "fonts")]
    assert _squeeze(after["text"]) == LINE + LINE + LONE, after


def test_the_sample_pdf_keeps_its_last_character_without_system_fonts() -> None:
    pdf = ROOT / "sidecar" / "vault_rag" / "sample_vault" / "Tools" / "Perforce Handbook.pdf"
    code = f"""
import json
from pathlib import Path
from vault_rag.sources import pdf_fonts
pdf_fonts.install_fallback_fonts([])
from vault_rag.sources.pdf_text import read_pdf
print(json.dumps(read_pdf(Path({str(pdf)!r}), max_mb=1, max_pages=10).pages[1]))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    page_2 = json.loads(done.stdout.strip().splitlines()[-1])
    assert _squeeze(page_2).endswith("会覆盖你的改动。"), page_2


def test_the_reader_in_this_process_keeps_the_machines_font_folders_first() -> None:
    from vault_rag.sources import pdf_fonts, pdf_text  # noqa: F401 (installs on import)

    assert pdf_fonts.install_fallback_fonts() == (
        *pdf_fonts.LINUX_FONT_DIRS,
        str(pdf_fonts.FALLBACK_DIR),
    )


def test_the_fallback_font_is_what_its_script_builds(tmp_path: Path) -> None:
    out = tmp_path / "again.ttf"
    script = ROOT / "scripts" / "pdf_fallback_font.py"
    subprocess.run([sys.executable, str(script), str(out)], check=True, capture_output=True)
    committed = ROOT / "sidecar" / "vault_rag" / "sources" / "fonts" / "glyph-boxes.ttf"
    assert out.read_bytes() == committed.read_bytes()
