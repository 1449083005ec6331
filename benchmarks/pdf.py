"""PDF text extraction: pypdfium2 vs pypdf on speed and on CJK text (docs/benchmarks.md,
"PDF text extraction"). The corpus is made here: every note of the bundled sample vault
(Chinese and English) printed to a PDF with `tests/pdf_fixtures.write_pdf` (CJK in
reportlab's built-in STSong-Light CID font), repeated `--copies` times.

    python -m benchmarks pdf [--copies 5]

Prints one Markdown table: pages, seconds, pages/s, and how much of the source text each
library gives back (characters of the source found, in order, in the extracted text; CJK
characters and Latin letters/digits counted separately).
"""

from __future__ import annotations

import argparse
import difflib
import re
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, SCRIPTS, TESTS, borrow

borrow(TESTS)
borrow(SCRIPTS)
from help_pdfs import note_pages  # noqa: E402
from pdf_fixtures import write_pdf  # noqa: E402

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z0-9]")


def corpus(out: Path, copies: int) -> list[tuple[Path, str]]:
    vault = ROOT / "sidecar/vault_rag/sample_vault"
    made = []
    for n, note in enumerate(sorted(vault.rglob("*.md"))):
        pages = note_pages(note.read_text(encoding="utf-8"), latin1=False)
        if not pages:
            continue
        source = "".join(p for _, paras in pages for p in paras)
        for copy in range(copies):
            made.append((write_pdf(out / f"{n}-{copy}.pdf", pages), source))
    return made


def pdfium_text(path: Path) -> tuple[str, int]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        texts = []
        for page in document:
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return "\n".join(texts), len(document)
    finally:
        document.close()


def pypdf_text(path: Path) -> tuple[str, int]:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    return "\n".join(page.extract_text() or "" for page in reader.pages), len(reader.pages)


def recovered(source: str, text: str, pattern: re.Pattern[str]) -> tuple[int, int]:
    want = "".join(pattern.findall(source))
    got = "".join(pattern.findall(text))
    matcher = difflib.SequenceMatcher(None, want, got, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks()), len(want)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = corpus(Path(tmp), args.copies)
        print("| library | PDFs | pages | seconds | pages/s | CJK chars back | Latin chars back |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, extract in (("pypdfium2", pdfium_text), ("pypdf", pypdf_text)):
            pages, cjk, latin = 0, [0, 0], [0, 0]
            started = time.perf_counter()
            texts = [(extract(path), source) for path, source in files]
            seconds = time.perf_counter() - started
            for (text, count), source in texts:
                pages += count
                for total, pattern in ((cjk, _CJK), (latin, _LATIN)):
                    found, want = recovered(source, text, pattern)
                    total[0] += found
                    total[1] += want
            print(
                f"| {name} | {len(files)} | {pages} | {seconds:.2f} | {pages / seconds:.0f} | "
                f"{cjk[0] / max(cjk[1], 1):.1%} | {latin[0] / max(latin[1], 1):.1%} |"
            )
    return 0
