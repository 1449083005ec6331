"""PDF text extraction: pypdfium2 vs pypdf on speed and on CJK text (docs/benchmarks.md,
"PDF text extraction"). The corpus is made here: every note of the bundled sample vault
(Chinese and English) printed to a PDF with `tests/pdf_fixtures.write_pdf` (CJK in
reportlab's built-in STSong-Light CID font), repeated `--copies` times.

    python -m benchmarks pdf [--copies 5]
    python -m benchmarks pdf --share [--embeddings local]

Prints one Markdown table: pages, seconds, pages/s, and how much of the source text each
library gives back (characters of the source found, in order, in the extracted text; CJK
characters and Latin letters/digits counted separately).

`--share`: extraction's share of a first index on a vault where a quarter of the files are
PDFs (the issue's target: at most 10 %). The vault is the sample vault's notes with every
fourth one printed to a PDF instead (its Markdown removed); the first index is `vault-rag index`
in a child process on a fresh data dir; extraction is timed here on the same PDFs, twice: the
text layer alone (pypdfium2) and `PdfKind.units` (text layer, outline, units cut and counted).
"""

from __future__ import annotations

import argparse
import difflib
import re
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, SCRIPTS, TESTS, borrow, cli, run_checked, sidecar_env

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


def quarter_pdf_vault(out: Path) -> list[Path]:
    """The sample vault's notes, every fourth (in path order) printed to a PDF instead."""
    vault = ROOT / "sidecar/vault_rag/sample_vault"
    pdfs = []
    for n, note in enumerate(sorted(vault.rglob("*.md"))):
        target = out / note.relative_to(vault)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = note.read_text(encoding="utf-8")
        pages = note_pages(text, latin1=False) if n % 4 == 0 else []
        if pages:
            pdfs.append(write_pdf(target.with_suffix(".pdf"), pages))
        else:
            target.write_text(text, encoding="utf-8")
    return pdfs


def share(embeddings: str) -> int:
    from vault_rag.chunking.pipeline import chunk_options
    from vault_rag.embeddings.factory import make_provider
    from vault_rag.sources.pdf import PdfKind
    from vault_rag.vault.links import NoteIndex

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        vault = work / "vault"
        pdfs = quarter_pdf_vault(vault)
        files = [p for p in vault.rglob("*") if p.is_file()]
        started = time.perf_counter()
        pages = sum(pdfium_text(path)[1] for path in pdfs)
        text_layer = time.perf_counter() - started
        # units are cut and counted in the tokens of the embedder the index uses
        options = chunk_options(None, make_provider(embeddings))
        kind = PdfKind()
        started = time.perf_counter()
        units = sum(
            len(kind.units(vault, p.relative_to(vault).as_posix(), NoteIndex([]), options).chunks)
            for p in pdfs
        )
        cut = time.perf_counter() - started
        env = sidecar_env(embeddings, work)
        index = run_checked(cli("index", "--vault", str(vault), "--data-dir", str(work / "d")), env)
        print(
            f"vault: {len(files)} files, {len(pdfs)} PDFs ({len(pdfs) / len(files):.0%}), "
            f"{pages} pages, {units} PDF units; embeddings {embeddings}"
        )
        print()
        print("| step | seconds | share of the first index |")
        print("|---|---:|---:|")
        print(f"| first index (`vault-rag index`, wall) | {index.wall:.1f} | 100% |")
        for name, seconds in (
            ("PDF text layer (pypdfium2)", text_layer),
            ("PDF units (`PdfKind.units`)", cut),
        ):
            print(f"| {name} | {seconds:.2f} | {seconds / index.wall:.1%} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--share", action="store_true", help="extraction's share of a first index")
    parser.add_argument("--embeddings", default="local", help="with --share: the embedder")
    args = parser.parse_args(argv)
    if args.share:
        return share(args.embeddings)
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
