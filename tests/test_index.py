"""Incremental indexing with the real local model, on every vector-store backend: embedded
Chroma, a real `chroma run` server and Milvus Lite (the `index` fixture is parametrised; the
model's vectors are memoised by text, so the extra backends cost store time only)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from vault_rag.index.lock import IndexLockedError, WriterLock
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import ModelMismatchError, VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

from index_helpers import CountingProvider, copy_vault, section_texts_of
from store_backends import open_backend_index


@pytest.fixture(scope="session")
def local_model():
    from vault_rag.embeddings.local import LocalE5Provider

    return LocalE5Provider()


@pytest.fixture(scope="session")
def counting(local_model) -> CountingProvider:
    return CountingProvider(local_model)


@pytest.fixture
def vault(tmp_path: Path, sample_vault: Path) -> Path:
    return copy_vault(sample_vault, tmp_path / "vault")


@pytest.fixture
def index(tmp_path: Path, vault: Path, counting: CountingProvider, backend):
    counting.reset()
    kind, url = backend
    vault_index = open_backend_index(kind, vault, tmp_path / "data", counting, url)
    yield vault_index
    vault_index.close()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def consistent(index: VaultIndex) -> set[str]:
    """Assert store, lexical index and manifest hold the same chunk ids; return them."""
    ids = index.manifest.chunk_ids()
    assert index.store.ids() == ids
    assert index.lexical.ids() == ids
    assert index.manifest.counts()["pending"] == 0
    return ids


def test_first_index_embeds_each_unique_chunk_once_then_nothing(index, counting):
    summary = Indexer(index).run()
    ids = consistent(index)
    hashes = index.manifest.chunk_hashes()
    assert summary.notes_seen >= 20
    assert summary.notes_changed == summary.notes_seen
    assert len(ids) > summary.notes_seen  # long notes split into several chunks
    units = {c.content_hash: c.embed_text for c in index.manifest.chunks(ids).values()}
    sections = section_texts_of(index.manifest.chunks(ids).values())
    assert sections  # the sample vault has units of several sections
    assert summary.chunks_embedded == len(set(hashes.values())) == len(units)
    # each unique unit once, and each section of a unit of several once
    assert sorted(counting.embedded) == sorted([*units.values(), *sections])
    assert summary.chunks_embedded + summary.chunks_reused == len(ids)

    counting.reset()
    again = Indexer(index).run()
    assert (again.notes_changed, again.chunks_embedded, again.notes_reindexed) == (0, 0, 0)
    assert counting.embedded == []
    assert consistent(index) == ids


def test_editing_one_note_embeds_exactly_the_changed_chunks(index, vault, counting):
    Indexer(index).run()
    before = set(index.manifest.chunk_hashes().values())
    # The note with the most chunks: an edit in its last section must leave the others alone.
    counts: dict[str, int] = {}
    for note in index.manifest.notes():
        counts[note] = len(index.manifest.chunk_ids(note))
    target = max(counts, key=lambda n: (counts[n], n))
    assert counts[target] >= 3
    last = index.manifest.note_chunks(target)[-1]
    lines = (vault / target).read_text(encoding="utf-8").split("\n")
    lines.insert(last.line_end, "\n新增一句：这是测试时插入的句子。An inserted test sentence.\n")
    (vault / target).write_text("\n".join(lines), encoding="utf-8")

    counting.reset()
    summary = Indexer(index).run()
    after = index.manifest.chunk_hashes()
    new_hashes = set(after.values()) - before
    assert summary.notes_changed == 1
    assert new_hashes, "the edit must change at least one chunk"
    sent = [t for t in counting.embedded if sha(t) in new_hashes]
    assert {sha(t) for t in sent} == new_hashes
    assert len(sent) == len(new_hashes) < counts[target]
    changed = [c for c in index.manifest.note_chunks(target) if c.content_hash in new_hashes]
    # besides the changed units, only their own sections went to the model
    assert sorted(t for t in counting.embedded if t not in sent) == sorted(
        section_texts_of(changed)
    )
    assert any("An inserted test sentence" in c.text for c in index.manifest.note_chunks(target))
    consistent(index)


def test_editing_an_embedded_note_reindexes_its_embedders(index, vault, counting):
    Indexer(index).run()
    deps = index.manifest.db.execute(
        "SELECT note_path, target FROM deps WHERE target NOT LIKE 'missing:%' ORDER BY 1, 2"
    ).fetchall()
    assert deps, "the sample vault must contain embeds"
    embedder, embedded = deps[0]
    # Append a marker inside the part of `embedded` that `embedder` shows: find a chunk of the
    # embedder whose text came from the embedded note and put the marker after its source line.
    from_embed = [c for c in index.manifest.note_chunks(embedder) if embedded in c.origins]
    assert from_embed
    marker = "MARKER-7f3a 嵌入测试标记"
    shown = next(line for c in from_embed for line in c.text.split("\n") if line.strip())
    text = (vault / embedded).read_text(encoding="utf-8")
    assert shown in text
    (vault / embedded).write_text(text.replace(shown, f"{shown} {marker}", 1), encoding="utf-8")

    counting.reset()
    summary = Indexer(index).run()
    assert summary.notes_changed == 1
    assert summary.notes_reindexed >= 2
    assert any(marker in c.text for c in index.manifest.note_chunks(embedded))
    assert any(marker in c.text for c in index.manifest.note_chunks(embedder))
    consistent(index)


def test_delete_removes_every_trace(index, vault):
    Indexer(index).run()
    victim = sorted(index.manifest.notes())[0]
    ids = index.manifest.chunk_ids(victim)
    (vault / victim).unlink()
    summary = Indexer(index).run()
    assert summary.notes_deleted == 1
    assert victim not in index.manifest.notes()
    assert not ids & consistent(index)


def test_rename_rekeys_without_embedding(index, vault, counting):
    Indexer(index).run()
    old = max(index.manifest.notes(), key=lambda n: len(index.manifest.chunk_ids(n)))
    texts_before = [c.text for c in index.manifest.note_chunks(old)]
    new = "Renamed/" + Path(old).name
    (vault / "Renamed").mkdir()
    shutil.move(vault / old, vault / new)
    counting.reset()
    summary = Indexer(index).run()
    assert summary.notes_renamed == 1
    assert old not in index.manifest.notes() and new in index.manifest.notes()
    assert [c.text for c in index.manifest.note_chunks(new)] == texts_before
    # Only chunks whose context header names the folder could change; the title is the same,
    # so nothing at all is embedded again.
    assert counting.embedded == []
    consistent(index)


def test_creating_a_missing_embed_target_reindexes_the_embedder(index, vault):
    (vault / "Embeds missing.md").write_text("# Host\n\n![[Later Note]]\n", encoding="utf-8")
    Indexer(index).run()
    codes = [w["code"] for w in index.manifest.warnings("Embeds missing.md")]
    assert "missing_note" in codes
    (vault / "Later Note.md").write_text("内容终于写好了 content arrived\n", encoding="utf-8")
    Indexer(index).run()
    assert index.manifest.warnings("Embeds missing.md") == []
    assert any("content arrived" in c.text for c in index.manifest.note_chunks("Embeds missing.md"))


def test_model_change_is_refused_until_rebuild(tmp_path, vault, counting, local_model):
    first = VaultIndex(vault, tmp_path / "data", counting)
    Indexer(first).run()
    first.close()
    other = CountingProvider(local_model, model_id="local:some-other-model")
    second = VaultIndex(vault, tmp_path / "data", other)
    with pytest.raises(ModelMismatchError, match="--rebuild"):
        Indexer(second).run()
    assert second.manifest.counts()["chunks"] > 0  # refused, nothing destroyed
    second.clear()
    Indexer(second).run()
    assert second.model_id == "local:some-other-model"
    consistent(second)
    second.close()


def test_second_writer_is_refused_at_once(index):
    with WriterLock(index.data_dir), pytest.raises(IndexLockedError, match="another vault-rag"):
        Indexer(index).run()


def test_search_is_lexical_before_vectors_arrive(index):
    """A note is searchable by BM25 as soon as it is chunked."""
    summary = Indexer(index).run(embed_limit=0)
    assert summary.chunks_pending == index.manifest.counts()["chunks"] > 0
    assert index.store.count() == 0
    results = hybrid_search(index, "BeginPlay", SearchOptions(k=5))
    assert results and all(r.dense_score is None for r in results)
    # Resuming embeds the rest without redoing anything.
    resumed = Indexer(index).run()
    assert resumed.notes_reindexed == 0
    assert resumed.chunks_embedded + resumed.chunks_reused == summary.chunks_pending
    consistent(index)
