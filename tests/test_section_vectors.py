"""Sections of merged units embedded at index time (`index/section_vectors.py`,
`index/updates/sections.py`) and read by the citation step without a model call."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vault_rag.chunking.spans import chunk_spans
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.section_vectors import section_texts
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.updates.sections import backfill
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.cite_cache import cache_for
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.services.embedding_choice import total_chars
from vault_rag.serving.context import make_indexer
from vault_rag.settings import Settings
from vault_rag.sources.base import make_unit

UNIT = """## Setup

Create the project and open the editor.

### Network emulation

Simulate packet loss and latency in the editor preferences.

## Shipping

Package the build."""

VAULT = {
    "Guide.md": "# Guide\n\n" + UNIT + "\n",
    "Other.md": "# Other\n\nSomething about the editor and packages.\n",
}


class CountingProvider(HashProvider):
    """The hashing model, recording the documents it embeds; `fail_on` makes every call whose
    texts include a section of the Guide's merged unit raise, as a model server that went down."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []
        self.fail_sections = False

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.fail_sections and any("## Guide > Setup > Network emulation" in t for t in texts):
            raise EmbeddingError("model server down")
        self.embedded.extend(texts)
        return super().embed_documents(texts)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for name, text in VAULT.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def provider() -> CountingProvider:
    return CountingProvider()


@pytest.fixture
def index(vault: Path, tmp_path: Path, provider: CountingProvider) -> Iterator[VaultIndex]:
    """The vault's index (nothing indexed yet) with the counting model."""
    built = VaultIndex(vault, tmp_path / "data", provider)
    yield built
    built.close()


def _forget_sections(index: VaultIndex) -> None:
    """As a manifest written before section vectors existed."""
    with index.manifest.transaction() as db:
        db.execute("DELETE FROM section_vectors")


def _rows(index: VaultIndex) -> dict[str, int]:
    db = index.manifest.db
    return dict(db.execute("SELECT content_hash, sections FROM section_vectors").fetchall())


def test_a_merged_unit_s_sections_are_embedded_with_it_and_searches_embed_none(
    index: VaultIndex, provider: CountingProvider
) -> None:
    Indexer(index).run()
    entry = cache_for(index).entry("Guide.md")
    chunk_id, unit = next((i, u) for i, u in entry.units.items() if len(u.spans) > 1)
    texts = section_texts(unit.chunk)
    assert len(texts) == len(unit.spans) == 4
    # each section embedded as a unit is: the title line, its heading path, its text
    assert [t.split("\n")[1] for t in texts] == [
        "## Guide",
        "## Guide > Setup",
        "## Guide > Setup > Network emulation",
        "## Guide > Shipping",
    ]
    emulation = texts[2]
    assert "packet loss" in emulation and "Package" not in emulation
    assert all(t in provider.embedded for t in texts)
    vectors = entry.span_vectors[chunk_id]
    assert vectors.shape == (4, provider.dimension)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    expected = np.asarray(HashProvider().embed_documents([emulation])[0], dtype=np.float32)
    assert np.allclose(vectors[2], expected / np.linalg.norm(expected), atol=1e-5)
    # a unit of one section is recorded as done, with no vectors
    assert sorted(_rows(index).values()) == [0, 4]
    provider.embedded.clear()
    cache_for(index)._entries.clear()  # a cold note: still nothing embedded at search time
    found = hybrid_search(index, "simulate packet loss latency", SearchOptions(cite_spans=True))
    assert found[0].anchor == "Network emulation"
    assert provider.embedded == []


def test_a_model_error_on_the_sections_keeps_the_units_and_is_mended_by_the_next_run(
    index: VaultIndex, provider: CountingProvider, caplog: pytest.LogCaptureFixture
) -> None:
    provider.fail_sections = True
    summary = Indexer(index).run()  # the units are in: the run does not fail for sections
    assert summary.chunks_embedded > 0 and index.manifest.counts()["pending"] == 0
    assert _rows(index) == {}  # the failed batch wrote nothing
    assert "sections not embedded" in caplog.text and "model server down" in caplog.text
    found = hybrid_search(index, "simulate packet loss latency", SearchOptions(cite_spans=True))
    assert found[0].anchor == "Network emulation"  # by words alone meanwhile
    provider.fail_sections = False
    provider.embedded.clear()
    again = Indexer(index).run()
    assert again.chunks_embedded == 0  # no unit again: only the sections
    assert len(provider.embedded) == 4
    assert sorted(_rows(index).values()) == [0, 4]


def test_units_are_all_embedded_before_any_section(
    index: VaultIndex, provider: CountingProvider
) -> None:
    Indexer(index, batch_size=1).run()
    units = {c.embed_text for n in VAULT for c in index.manifest.note_chunks(n)}
    first_section = next(i for i, t in enumerate(provider.embedded) if t not in units)
    assert set(provider.embedded[:first_section]) == units


def test_an_index_from_before_section_vectors_gets_them_on_its_next_run(
    index: VaultIndex, provider: CountingProvider
) -> None:
    Indexer(index).run()
    _forget_sections(index)
    entry = cache_for(index).entry("Guide.md")
    assert entry.span_vectors == {}  # the citation then goes by words alone
    provider.embedded.clear()
    summary = Indexer(index).run()
    assert summary.chunks_embedded == 0  # no unit re-embedded: only their sections
    assert len(provider.embedded) == 4
    assert sorted(_rows(index).values()) == [0, 4]
    assert cache_for(index).entry("Guide.md").span_vectors  # the cache saw the new rows
    provider.embedded.clear()
    Indexer(index).run()
    assert provider.embedded == []  # done once


def test_backfill_is_bounded_and_resumes(index: VaultIndex, provider: CountingProvider) -> None:
    Indexer(index).run()
    _forget_sections(index)
    assert index.manifest.sections_missing_count() == 2
    assert backfill(index.manifest, provider, batch_size=1, limit=1) == 1
    assert index.manifest.sections_missing_count() == 1
    assert backfill(index.manifest, provider, batch_size=1) == 1
    assert backfill(index.manifest, provider, batch_size=1) == 0


def test_an_edit_replaces_the_sections_and_prunes_the_old_ones(
    index: VaultIndex, vault: Path
) -> None:
    Indexer(index).run()
    before = set(_rows(index))
    (vault / "Guide.md").write_text("# Guide\n\nIntro.\n\n" + UNIT + "\n", encoding="utf-8")
    Indexer(index).run()
    after = set(_rows(index))
    assert after != before
    hashes = {h for (h,) in index.manifest.db.execute("SELECT content_hash FROM chunks")}
    assert after == hashes  # every unit has its row, and no row outlives its unit
    entry = cache_for(index).entry("Guide.md")
    assert any(len(v) == len(entry.units[i].spans) for i, v in entry.span_vectors.items())


def test_a_comment_in_code_is_no_heading_so_a_code_unit_is_one_section() -> None:
    text = "# Read the config\nimport os\n\n# Then write it\ndef save():\n    pass"
    lines = text.count("\n") + 1
    code = make_unit(
        path="tools/config.py",
        kind="code",
        title="config.py",
        text=text,
        heading=(),
        anchor="",
        ordinal=0,
        line_start=1,
        line_end=lines,
    )
    assert [s.heading_path for s in chunk_spans(code, {})] == [""]
    assert section_texts(code) == []
    # the same lines in a note are two sections
    note = replace(code, extra={})
    assert [s.anchor for s in chunk_spans(note, {})] == ["Read the config", "Then write it"]


def test_a_model_switch_estimate_counts_the_sections_it_will_embed(index: VaultIndex) -> None:
    Indexer(index).run()
    units = [c for c in index.manifest.note_chunks("Guide.md")] + list(
        index.manifest.note_chunks("Other.md")
    )
    merged = [c for c in units if section_texts(c)]
    assert len(merged) == 1
    expected = sum(len(c.embed_text) for c in units) + len(merged[0].embed_text)
    assert total_chars(index.manifest) == expected


def test_with_citing_off_no_section_is_embedded(
    index: VaultIndex, provider: CountingProvider, vault: Path, tmp_path: Path
) -> None:
    settings = Settings(vault=vault, data_dir=tmp_path / "data", cite_spans=False)
    indexer = make_indexer(settings, index)
    assert indexer.sections is False
    indexer.run()
    assert _rows(index) == {}
    units = {c.embed_text for n in VAULT for c in index.manifest.note_chunks(n)}
    assert sorted(provider.embedded) == sorted(units)
    assert make_indexer(settings.model_copy(update={"cite_spans": True}), index).sections
