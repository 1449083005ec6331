"""The source-kind interface: one file of a known kind → retrieval units with provenance.

A unit is a `Chunk` (`chunking/types.py`): its `note_path` is the file, `hierarchy_path` and
`anchor` its heading or label, `line_start`/`line_end` its lines (pages for a PDF), and
`extra` says the rest: `kind` (absent for Markdown, whose units are unchanged), `page` and
`page_end` for PDFs. Anything wrong with a file is a `VaultWarning` on the result, never an
exception: one bad file must not stop the indexing of the others.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol

from vault_rag.chunking.chunker import ID_HEX_CHARS, ChunkOptions
from vault_rag.chunking.pipeline import NoteChunks
from vault_rag.chunking.size import text_size
from vault_rag.chunking.types import HIERARCHY_SEPARATOR, Chunk
from vault_rag.vault.links import NoteIndex

__all__ = ["NoteChunks", "SourceKind", "make_unit"]


class SourceKind(Protocol):
    """One kind of vault file. `name` is the settings' word for it (`index_kinds`), `suffixes`
    the lower-case file name endings it reads."""

    name: str
    suffixes: tuple[str, ...]

    def units(
        self, vault_root: Path, rel: str, notes: NoteIndex, options: ChunkOptions
    ) -> NoteChunks:
        """The file's units and warnings; never raises for bad content (an unsafe path may)."""
        ...


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def make_unit(
    *,
    path: str,
    kind: str,
    title: str,
    text: str,
    heading: tuple[str, ...],
    anchor: str,
    ordinal: int,
    line_start: int,
    line_end: int,
    extra: dict[str, object] | None = None,
) -> Chunk:
    """A unit of a non-Markdown file, with the Markdown units' header (title, heading path)
    so the two embed alike. The id depends on the path, the kind's position (`anchor`) and
    the ordinal, as Markdown ids do."""
    hierarchy = HIERARCHY_SEPARATOR.join(heading)
    header = f"# {title}" + (f"\n## {hierarchy}" if hierarchy else "")
    embed_text = f"{header}\n\n{text}"
    data: dict[str, object] = {"kind": kind, **(extra or {})}
    return Chunk(
        id=_sha(path, kind, anchor, hierarchy, str(ordinal))[:ID_HEX_CHARS],
        note_path=path,
        text=text,
        embed_text=embed_text,
        content_hash=_sha(embed_text),
        hierarchy_path=hierarchy,
        anchor=anchor,
        line_start=line_start,
        line_end=line_end,
        has_code=False,
        size=text_size(text),
        title=title,
        origin=path,
        origins=(path,),
        extra=data,
    )
