"""Markdown notes: the vault reader, embed resolution and the chunker, unchanged
(`pipeline.chunk_vault_note`). Its units carry no `kind` in `extra`: they are exactly what the
index held before source kinds existed."""

from __future__ import annotations

from pathlib import Path

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.chunking.pipeline import NoteChunks, chunk_vault_note
from vault_rag.vault.links import NoteIndex


class MarkdownKind:
    name = "md"
    suffixes = (".md",)

    def units(
        self, vault_root: Path, rel: str, notes: NoteIndex, options: ChunkOptions
    ) -> NoteChunks:
        return chunk_vault_note(vault_root, rel, notes, options)
