"""Build the PDF reader's fallback font, `sidecar/vault_rag/sources/fonts/glyph-boxes.ttf`
(issue 40): one square glyph for every CJK code point, so PDFium can measure CJK text whose
font is neither embedded in the PDF nor installed on the machine.

    python scripts/pdf_fallback_font.py [OUT_PATH]

Why: PDFium skips a text object whose bounding box has no width (`ProcessTextObject` in
core/fpdftext/cpdf_textpage.cpp), and a glyph it has no font for has an empty box. A PDF that
names a standard CJK font without embedding it (STSong-Light, SimSun, MS-Mincho...) read on a
machine without a CJK font therefore lost every text object made of one such glyph: the
sample PDF's lone `。` at the end of page 2, or whole pages from generators that place each
character on its own. The glyphs' shapes do not matter for text, only their boxes.

The font declares the Chinese, Japanese and Korean code pages (OS/2), so PDFium's font mapper
offers it only for CJK fonts, and only where no installed font of that script matches better
(`sources/pdf_fonts.py`). The committed file is this script's output: fontTools (test extra),
fixed timestamps, so a rebuild gives the same bytes (tests/test_pdf_fonts.py checks).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import newTable
from fontTools.ttLib.tables._c_m_a_p import CmapSubtable

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "sidecar" / "vault_rag" / "sources" / "fonts" / "glyph-boxes.ttf"
FAMILY = "Vault RAG Glyph Boxes"
UNITS = 1000
ASCENT, DESCENT = 880, -120  # an ideographic em box, as in the common CJK fonts
# 2000-01-01 in the font's epoch (seconds since 1904): no build date in the bytes
FIXED_TIME = 3029529600

# The scripts whose PDFs name standard fonts without embedding them: Hangul Jamo, CJK
# radicals to the unified ideographs (with punctuation, kana, bopomofo, compatibility and
# extension A), Hangul syllables, compatibility ideographs, vertical and compatibility forms,
# half- and full-width forms, and the supplementary ideographic planes.
CJK_RANGES = [
    (0x1100, 0x11FF),
    (0x2E80, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
    (0x20000, 0x2FFFF),
    (0x30000, 0x3134F),
]
# OS/2 ulCodePageRange1 bits: 17 Japanese (Shift-JIS), 18 Simplified Chinese (GB2312), 19
# Korean Wansung, 20 Traditional Chinese (Big5), 21 Korean Johab.
CJK_CODE_PAGES = (1 << 17) | (1 << 18) | (1 << 19) | (1 << 20) | (1 << 21)


def _square() -> object:
    pen = TTGlyphPen(None)
    pen.moveTo((50, DESCENT))
    pen.lineTo((50, ASCENT))
    pen.lineTo((UNITS - 50, ASCENT))
    pen.lineTo((UNITS - 50, DESCENT))
    pen.closePath()
    return pen.glyph()


def build(out: Path) -> Path:
    builder = FontBuilder(UNITS, isTTF=True)
    builder.setupGlyphOrder([".notdef", "square"])
    builder.setupGlyf({".notdef": _square(), "square": _square()})
    # One format 13 subtable (many code points to one glyph): a few bytes per range.
    cmap = newTable("cmap")
    cmap.tableVersion = 0
    table = CmapSubtable.newSubtable(13)
    table.platformID, table.platEncID, table.language = 3, 10, 0
    table.cmap = {cp: "square" for start, end in CJK_RANGES for cp in range(start, end + 1)}
    cmap.tables = [table]
    builder.font["cmap"] = cmap
    builder.setupHorizontalMetrics({".notdef": (UNITS, 50), "square": (UNITS, 50)})
    builder.setupHorizontalHeader(ascent=ASCENT, descent=DESCENT)
    builder.setupNameTable({"familyName": FAMILY, "styleName": "Regular"})
    builder.setupOS2(
        sTypoAscender=ASCENT,
        sTypoDescender=DESCENT,
        usWinAscent=ASCENT,
        usWinDescent=-DESCENT,
        ulCodePageRange1=CJK_CODE_PAGES,
    )
    builder.setupPost()
    builder.font["head"].created = FIXED_TIME
    builder.font["head"].modified = FIXED_TIME
    builder.font.recalcTimestamp = False
    out.parent.mkdir(parents=True, exist_ok=True)
    builder.save(str(out))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT)
    print(build(parser.parse_args().out))


if __name__ == "__main__":
    main()
