"""Every note of the real vaults in ../shared/vaults resolves and chunks without an exception
(skipped when that folder is absent)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vault_rag.chunking.pipeline import chunk_vault_note
from vault_rag.cli import app
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.listing import iter_note_paths

from conftest import SHARED_VAULT_NAMES, shared_vault

pytestmark = pytest.mark.shared_vaults


@pytest.mark.parametrize("name", SHARED_VAULT_NAMES)
def test_every_note_resolves_and_chunks(name: str):
    vault = shared_vault(name)
    index = NoteIndex.from_vault(vault)
    paths = list(iter_note_paths(vault))
    assert len(paths) > 100
    chunks = 0
    for rel in paths:
        result = chunk_vault_note(vault, rel, index)
        chunks += len(result.chunks)
        for chunk in result.chunks:
            assert chunk.text.strip()
            assert 1 <= chunk.line_start <= chunk.line_end
    assert chunks >= len(paths)


def test_missing_targets_are_listed_as_warnings():
    """The zh help vault has embeds of headings and notes that do not exist."""
    vault = shared_vault("obsidian-help-zh")
    index = NoteIndex.from_vault(vault)
    codes = set()
    for rel in iter_note_paths(vault):
        codes.update(w.code for w in chunk_vault_note(vault, rel, index).warnings)
    assert codes & {"missing_note", "missing_heading", "missing_block"}


@pytest.mark.parametrize("name", SHARED_VAULT_NAMES)
def test_cli_chunks_json_on_real_notes(name: str):
    vault = shared_vault(name)
    runner = CliRunner()
    for rel in list(iter_note_paths(vault))[:15]:
        result = runner.invoke(app, ["chunks", rel, "--vault", str(vault), "--json"])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        assert set(payload) == {"chunks", "warnings"}
        for chunk in payload["chunks"]:
            for key in (
                "id",
                "text",
                "hierarchy_path",
                "anchor",
                "line_start",
                "line_end",
                "has_code",
                "size",
                "origin",
            ):
                assert key in chunk


@pytest.mark.parametrize("name", SHARED_VAULT_NAMES)
def test_every_real_vault_indexes_and_searches(name: str, tmp_path):
    """The whole index path (resolve, chunk, BM25, Chroma, manifest) over a real vault.

    Vectors come from the wire-level fake OpenAI embeddings server: the bundled model would
    need most of an hour for the ~800 real notes on two cores, and this test is about the
    pipeline surviving real notes, not about vector quality (test_search_quality covers that).
    """
    from vault_rag.embeddings.factory import make_provider
    from vault_rag.index.updates.indexer import Indexer
    from vault_rag.index.vault_index import VaultIndex
    from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

    from fakes.openai_server import FakeOpenAIServer

    vault = shared_vault(name)
    with FakeOpenAIServer() as server:
        provider = make_provider(
            "openai", model="fake-embedding", base_url=server.base_url, api_key="k"
        )
        index = VaultIndex(vault, tmp_path / "data", provider)
        try:
            summary = Indexer(index, batch_size=64).run()
            counts = index.manifest.counts()
            assert summary.notes_seen == len(list(iter_note_paths(vault)))
            assert counts["pending"] == 0 and counts["chunks"] >= summary.notes_seen
            assert index.store.count() == index.lexical.count() == counts["chunks"]
            note = sorted(index.manifest.notes())[summary.notes_seen // 2]
            query = note.rsplit("/", 1)[-1].removesuffix(".md")
            results = hybrid_search(index, query, SearchOptions(k=10))
            assert note in [r.note_path for r in results], f"{note} not found by its title"
        finally:
            index.close()
