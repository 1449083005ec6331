"""The note-level dense signal (index/dense/note_vectors.py): centroids derived from the manifest's
vector cache, kept in step with every write, and a search term that re-orders candidates
without ever adding one (real manifest, real embedded Chroma, real BM25)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vault_rag.index.dense.note_vectors import NoteVectors
from vault_rag.index.manifest import Manifest
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

from index_helpers import store_vectors as _store


def test_centroids_follow_every_write(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "m.sqlite3")
    notes = NoteVectors(manifest)
    assert notes.rank([1.0, 0.0, 0.0], 5) == []

    _store(manifest, "a.md", {"a1": [1.0, 0.0, 0.0], "a2": [0.0, 1.0, 0.0]})
    _store(manifest, "b.md", {"b1": [0.0, 0.0, 1.0]})
    ranked = notes.rank([1.0, 1.0, 0.0], 5)
    assert [p for p, _ in ranked] == ["a.md", "b.md"]
    # a's centroid is the normalised mean of its two units: cosine 1 with (1, 1, 0)/√2
    assert ranked[0][1] == pytest.approx(np.sqrt(2), rel=1e-5)

    # a note edited so that it is now about the other axis moves with it
    _store(manifest, "b.md", {"b2": [1.0, 1.0, 0.0]})
    _store(manifest, "a.md", {"a3": [0.0, 0.0, 1.0]})
    assert [p for p, _ in notes.rank([1.0, 1.0, 0.0], 5)] == ["b.md", "a.md"]

    # units waiting for a vector do not count; a deleted note is gone
    manifest.mark_embedded(["a.md#0"], embedded=False)
    assert [p for p, _ in notes.rank([0.0, 0.0, 1.0], 5)] == ["b.md"]
    manifest.delete_note("b.md")
    assert notes.rank([1.0, 1.0, 0.0], 5) == []


def test_rank_respects_the_allowed_notes_and_depth(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "m.sqlite3")
    for i, vector in enumerate(([1.0, 0.0], [0.9, 0.1], [0.0, 1.0])):
        _store(manifest, f"n{i}.md", {f"h{i}": vector})
    notes = NoteVectors(manifest)
    assert [p for p, _ in notes.rank([1.0, 0.0], 2)] == ["n0.md", "n1.md"]
    assert [p for p, _ in notes.rank([1.0, 0.0], 5, {"n1.md", "n2.md"})] == ["n1.md", "n2.md"]


def test_a_write_through_another_connection_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    reader, writer = Manifest(path), Manifest(path)
    notes = NoteVectors(reader)
    _store(writer, "a.md", {"a1": [1.0, 0.0]})
    assert [p for p, _ in notes.rank([1.0, 0.0], 5)] == ["a.md"]
    _store(writer, "b.md", {"b1": [0.0, 1.0]})
    assert [p for p, _ in notes.rank([0.0, 1.0], 5)] == ["b.md", "a.md"]


@pytest.mark.parametrize(
    "query", ["UPROPERTY 垃圾回收", "how do I keep an actor from ticking", "材质参数"]
)
def test_the_note_signal_reorders_and_never_adds(hashed_index: VaultIndex, query: str) -> None:
    # the candidates themselves are compared: no re-citing of a note's units (cite_spans)
    deep = {"k": 200, "per_note_cap": 200, "cite_spans": False}
    off = hybrid_search(hashed_index, query, SearchOptions(note_weight=0.0, **deep))
    on = hybrid_search(hashed_index, query, SearchOptions(note_weight=1.0, **deep))

    # keyed by text: embedded copies of one text fold into one result, cited at either copy
    def key(result):
        return " ".join(result.text.split())

    assert off and {key(r) for r in on} == {key(r) for r in off}
    # each candidate's score grew by its note's centroid term, never shrank
    before = {key(r): r.base_score for r in off}
    assert all(r.base_score >= before[key(r)] for r in on)
    assert any(r.base_score > before[key(r)] for r in on)


def test_writes_in_this_process_refresh_only_their_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write names the notes it touched, so the next search reads only those notes' units
    (at 10,000 notes re-reading all of them cost ~0.3 s per write); the centroids are always
    those a fresh build gives. A transaction that names nothing makes it compare everything."""
    rng = np.random.default_rng(0)
    manifest = Manifest(tmp_path / "m.sqlite3")
    notes = NoteVectors(manifest)

    def vec() -> list[float]:
        return [float(x) for x in rng.normal(size=4)]

    for i in range(30):
        _store(manifest, f"n{i}.md", {f"h{i}a": vec(), f"h{i}b": vec()})
    query = [1.0, 0.5, -0.2, 0.1]
    notes.rank(query, 50)  # built
    full_reads: list[int] = []
    real = manifest.embedded_hashes
    monkeypatch.setattr(manifest, "embedded_hashes", lambda: full_reads.append(1) or real())

    _store(manifest, "n3.md", {"n3-new": vec()})  # replaced
    manifest.delete_note("n5.md")
    _store(manifest, "new.md", {"new1": vec()})
    manifest.mark_embedded(["n7.md#0"], embedded=False)  # a unit the store lost
    got = notes.rank(query, 50)
    assert full_reads == []
    assert got == NoteVectors(manifest).rank(query, 50)
    assert "n5.md" not in dict(got) and "new.md" in dict(got)

    full_reads.clear()  # (the fresh build above read everything)
    with manifest.transaction() as db:  # e.g. `vault-rag migrate`: does not say what it did
        db.execute("UPDATE chunks SET embedded=0 WHERE note_path='n9.md'")
    got = notes.rank(query, 50)
    assert full_reads == [1] and "n9.md" not in dict(got)
    assert got == NoteVectors(manifest).rank(query, 50)


def test_vector_arrays_in_one_pass_are_the_batched_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a few thousand hashes the vector cache is read in one pass into one buffer; the
    arrays are the same bytes as the per-batch lookups give, unknown hashes left out."""
    from vault_rag.index import manifest as manifest_module

    manifest = Manifest(tmp_path / "m.sqlite3")
    rng = np.random.default_rng(1)
    vectors = {f"h{i}": [float(x) for x in rng.normal(size=8)] for i in range(50)}
    manifest.cache_vectors(vectors)
    wanted = [*list(vectors)[::2], "unknown"]
    batched = manifest.vector_arrays(wanted, batch=7)
    monkeypatch.setattr(manifest_module, "_WHOLE_TABLE", 0)
    one_pass = manifest.vector_arrays(wanted)
    assert one_pass.keys() == batched.keys() == set(list(vectors)[::2])
    for key, array in one_pass.items():
        assert array.dtype == np.float32 and np.array_equal(array, batched[key])


def test_the_best_notes_come_in_the_full_stable_order_ties_included(tmp_path: Path) -> None:
    """`rank` takes the `depth` best without sorting every note; the list is exactly what a
    stable sort of every score gives (equal scores in note order), with and without a filter."""
    rng = np.random.default_rng(2)
    manifest = Manifest(tmp_path / "m.sqlite3")
    pool = [[float(x) for x in rng.normal(size=6)] for _ in range(5)]
    for i in range(60):  # 60 notes sharing 5 directions: many exact ties
        _store(manifest, f"n{i:02d}.md", {f"h{i}": pool[i % 5]})
    notes = NoteVectors(manifest)
    paths, matrix = notes._current()
    for query in (pool[0], [float(x) for x in rng.normal(size=6)]):
        scores = matrix @ np.asarray(query, dtype=np.float32)
        order = np.argsort(-scores, kind="stable")
        for depth in (1, 7, 12, 59, 60, 80):
            expected = [(paths[i], float(scores[i])) for i in order[:depth]]
            assert notes.rank(query, depth) == expected
        allowed = {p for p in paths if p.endswith(("1.md", "6.md"))}
        expected = [(paths[i], float(scores[i])) for i in order if paths[i] in allowed][:4]
        assert notes.rank(query, 4, allowed) == expected
