"""The mirror of a web source read as units: each page's Markdown through the vault's own
resolver and chunker (`chunking/pipeline`), titled by the page's title instead of its file
name, and PDFs through `PdfKind`; every unit's `extra` says `kind: web` (`web_pdf` for a PDF),
`url` (with `#anchor` when the HTML gave its section's heading an id), `page_url` and
`page_title`. A file of the mirror the crawl state does not know gives a warning and no units."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from vault_rag.chunking.chunker import ChunkOptions, chunk_note
from vault_rag.chunking.pipeline import NoteChunks
from vault_rag.chunking.types import HIERARCHY_SEPARATOR, Chunk
from vault_rag.sources.pdf import PdfKind
from vault_rag.sources.web.extract import heading_key
from vault_rag.sources.web.state import CrawlState, Page
from vault_rag.vault.embeds import resolve_note
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.types import ResolvedNote, VaultWarning

KIND = "web"
# web-2: a page's sections are not merged with their siblings (below)
WEB_VERSION = "web-2"


class _WebNote(ResolvedNote):
    """A page's resolved text, titled by the page's own title."""

    page_title: str = ""

    @property
    def title(self) -> str:  # type: ignore[override]
        return self.page_title or super().title


class WebKind:
    name = KIND
    suffixes = (".md", ".pdf")
    version = WEB_VERSION

    def __init__(self, state_file: Path, pdf: PdfKind) -> None:
        self.state_file = state_file
        self.pdf = pdf

    def units(
        self, vault_root: Path, rel: str, notes: NoteIndex, options: ChunkOptions
    ) -> NoteChunks:
        page = self._page(rel)
        if page is None:
            note = ResolvedNote(path=rel, text="")
            note.warnings.append(
                VaultWarning("unreadable", "a mirror file the crawl state does not know", rel)
            )
            return NoteChunks(note=note)
        if rel.lower().endswith(".pdf"):
            found = self.pdf.units(vault_root, rel, notes, options)
            title = page.title or rel.rsplit("/", 1)[-1]
            chunks = [
                _cite(c, page, anchor=c.anchor, kind="web_pdf", title=title) for c in found.chunks
            ]
            return NoteChunks(note=found.note, chunks=chunks)
        resolved = resolve_note(vault_root, rel, NoteIndex([rel]))
        note = _WebNote(**{f.name: getattr(resolved, f.name) for f in dataclasses.fields(resolved)})
        note.page_title = page.title
        # Each section of a page is a unit of its own (no merging of short sibling sections up
        # to `chunk_min`): a documentation page's sections are short and answer one question
        # each, and a merged unit is cited by its first section only, so the answer's section
        # (an FAQ entry) could never be cited (docs/retrieval.md, "Web documentation").
        own = dataclasses.replace(options, target_min=0)
        chunks = [
            _cite(c, page, anchor=_anchor(page, c.hierarchy_path), kind=KIND, title=page.title)
            for c in chunk_note(note, own)
        ]
        return NoteChunks(note=note, chunks=chunks)

    def _page(self, rel: str) -> Page | None:
        if not self.state_file.is_file():
            return None
        state = CrawlState(self.state_file, read_only=True)
        try:
            return state.page_at(rel)
        finally:
            state.close()


def _anchor(page: Page, hierarchy: str) -> str:
    """The id of the deepest heading of the unit's path that has one."""
    for heading in reversed(hierarchy.split(HIERARCHY_SEPARATOR) if hierarchy else []):
        anchor = page.anchors.get(heading_key(heading))
        if anchor:
            return anchor
    return ""


def _cite(chunk: Chunk, page: Page, *, anchor: str, kind: str, title: str) -> Chunk:
    url = page.url
    if kind == "web_pdf" and chunk.extra.get("page"):
        url += f"#page={chunk.extra['page']}"
    elif anchor:
        url += f"#{anchor}"
    extra = {**chunk.extra, "kind": kind, "url": url, "page_url": page.url, "page_title": title}
    return dataclasses.replace(chunk, extra=extra)
