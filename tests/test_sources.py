"""The source layer: Markdown through `MarkdownKind` gives exactly the chunks the pipeline gave
before source kinds existed (on the sample vault and, when present, the real vaults); the
registry picks kinds by suffix and `index_kinds`; the listing and the watcher's path test list
the enabled kinds' files."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_rag.chunking.pipeline import chunk_options, chunk_vault_note
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.settings import Settings
from vault_rag.sources.markdown import MarkdownKind
from vault_rag.sources.registry import source_registry
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.listing import VaultListing, iter_note_paths
from vault_rag.vault.reader import is_note_path

from conftest import SHARED_VAULT_NAMES, shared_vault


def _same_chunks(vault: Path) -> int:
    options = chunk_options(None, HashProvider())
    paths = list(iter_note_paths(vault))
    notes = NoteIndex(paths)
    kind = MarkdownKind()
    for rel in paths:
        before = chunk_vault_note(vault, rel, notes, options)
        after = kind.units(vault, rel, notes, options)
        assert [c.to_dict() for c in after.chunks] == [c.to_dict() for c in before.chunks], rel
        assert after.warnings == before.warnings, rel
    return len(paths)


def test_markdown_kind_is_the_pipeline_on_the_sample_vault(sample_vault: Path) -> None:
    assert _same_chunks(sample_vault) > 10


@pytest.mark.parametrize("name", SHARED_VAULT_NAMES)
def test_markdown_kind_is_the_pipeline_on_real_vaults(name: str) -> None:
    assert _same_chunks(shared_vault(name)) > 100


def test_registry_by_suffix_and_setting() -> None:
    registry = source_registry(Settings.model_construct(index_kinds=["md"]))
    assert registry.suffixes == (".md",)
    assert registry.kind_name("A/B.MD") == "md"
    assert registry.kind_for("a.pdf") is None
    assert registry.kind_for("notes.md.txt") is None


def test_listing_lists_only_the_enabled_suffixes(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.md", "b.pdf", "sub/c.canvas", "sub/d.PDF", "e.txt", "f.pdfx"):
        (tmp_path / name).write_bytes(b"x")
    assert VaultListing(tmp_path).paths() == ["a.md"]
    wide = VaultListing(tmp_path, suffixes=(".canvas", ".md", ".pdf"))
    assert wide.paths() == ["a.md", "b.pdf", "sub/c.canvas", "sub/d.PDF"]
    assert is_note_path("sub/d.PDF", suffixes=(".md", ".pdf"))
    assert not is_note_path("sub/d.PDF")
    assert not is_note_path(".hidden/x.pdf", suffixes=(".pdf",))
