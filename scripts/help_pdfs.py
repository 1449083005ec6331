"""Build the PDF question set's vault: a copy of the Obsidian Help vault (../shared/vaults,
never copied into this repository) whose `Obsidian Sync/` folder is stored as PDFs, one per
note, each `##` section starting a new page with an outline entry (tests/data/qa/README.md,
`pdf-help-en.jsonl`). Deterministic: the same pages every time (reportlab, built-in fonts).

    python scripts/help_pdfs.py OUT_DIR [--vault ../shared/vaults/obsidian-help-en] [--pages]

`--pages` prints each PDF's sections with the page they start on (for writing `gold_page`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pdf_fixtures import write_pdf

FOLDER = "Obsidian Sync"
_ASCII = {"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "...", "→": "->",
          "\u00a0": " ", "•": "-", "×": "x", "≥": ">=", "≤": "<="}  # fmt: skip


def plain(markdown: str, latin1: bool = True) -> str:
    """Markdown as a reader sees it in a printed page (links as their text, no syntax)."""
    text = re.sub(r"!\[\[[^\]]*\]\]|!\[[^\]]*\]\([^)]*\)", "", markdown)
    text = re.sub(r"\[\[([^\]|#]*)(?:#[^\]|]*)?\|([^\]]*)\]\]", r"\2", text)
    text = re.sub(r"\[\[([^\]|#]*)#?([^\]|]*)\]\]", lambda m: m.group(2) or m.group(1), text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"^>\s*\[![^\]]*\][+-]?\s*", "", text, flags=re.M)
    text = re.sub(r"^>\s?", "", text, flags=re.M)
    text = re.sub(r"[*_`]{1,3}|==|%%[^%]*%%", "", text)
    text = "".join(_ASCII.get(ch, ch) for ch in text)
    # (Helvetica has Latin-1 glyphs only; text with CJK is drawn in a CID font instead)
    return text.encode("latin-1", "ignore").decode("latin-1") if latin1 else text


def note_pages(markdown: str, latin1: bool = True) -> list[tuple[str | None, list[str]]]:
    """One page group per `##` section (the text before the first one with the title)."""
    body = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    groups: list[tuple[str | None, list[str]]] = [(None, [])]
    for block in re.split(r"\n\s*\n", body):
        block = block.strip()
        heading = re.match(r"^(#{1,3})\s+(.*)$", block.splitlines()[0]) if block else None
        if heading and len(heading.group(1)) == 2:
            title = plain(heading.group(2), latin1).strip()
            groups.append((title, [f"# {title}"]))
            block = "\n".join(block.splitlines()[1:]).strip()
        elif heading:
            groups[-1][1].append("# " + plain(heading.group(2), latin1).strip())
            block = "\n".join(block.splitlines()[1:]).strip()
        text = " ".join(plain(block, latin1).split())
        if text:
            groups[-1][1].append(text)
    return [g for g in groups if g[1]]


def build(vault: Path, out: Path) -> dict[str, list[tuple[str | None, int]]]:
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(vault, out)
    layout: dict[str, list[tuple[str | None, int]]] = {}
    for note in sorted((out / FOLDER).glob("*.md")):
        pages = note_pages(note.read_text(encoding="utf-8"))
        pdf = note.with_suffix(".pdf")
        write_pdf(pdf, pages, title=note.stem)
        note.unlink()
        layout[f"{FOLDER}/{pdf.name}"] = _starts(pdf, [title for title, _ in pages])
    return layout


def _starts(pdf: Path, titles: list[str | None]) -> list[tuple[str | None, int]]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    try:
        marks = {b.get_title(): b.get_dest().get_index() + 1 for b in document.get_toc()}
        return [(t, marks.get(t, 1) if t else 1) for t in titles] + [(None, len(document))]
    finally:
        document.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    default = Path(__file__).resolve().parents[2] / "shared/vaults/obsidian-help-en"
    parser.add_argument("--vault", type=Path, default=default)
    parser.add_argument("--pages", action="store_true")
    args = parser.parse_args()
    layout = build(args.vault, args.out)
    print(f"{args.out}: {len(layout)} PDFs in {FOLDER}/")
    if args.pages:
        for path, sections in layout.items():
            print(path)
            for title, page in sections:
                print(f"  p{page}: {title or '(pages in all)'}")


if __name__ == "__main__":
    main()
