"""Dense search with the corpus mean partly taken off (retrieval/dense.py): the corpus mean
follows every write, the centred ranking is exactly the brute-force one over the store's pool,
`dense_score` stays the plain cosine, and a hub passage close to everything loses its place
(real manifest, real embedded Chroma, real BM25; vectors from the stand-in embedder or set by
hand in the manifest's vector cache)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.dense.note_vectors import NoteVectors
from vault_rag.index.manifest import Manifest
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.dense import (
    CENTER_POOL,
    dense_candidates,
    dense_ranking,
    exact_cosines,
    matching,
)
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

from index_helpers import store_vectors


def test_the_corpus_mean_follows_every_write(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "m.sqlite3")
    notes = NoteVectors(manifest)
    assert notes.mean() is None
    store_vectors(manifest, "a.md", {"a1": [1.0, 0.0], "a2": [0.0, 1.0]})
    store_vectors(manifest, "b.md", {"b1": [1.0, 1.0]})
    np.testing.assert_allclose(notes.mean(), [2 / 3, 2 / 3], rtol=1e-6)
    manifest.delete_note("a.md")
    np.testing.assert_allclose(notes.mean(), [1.0, 1.0], rtol=1e-6)


def test_centred_note_ranks_are_the_centred_cosines(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "m.sqlite3")
    vectors = {"n0": [1.0, 0.2, 0.0], "n1": [0.9, 0.0, 0.4], "n2": [0.0, 1.0, 0.1]}
    for i, (h, v) in enumerate(vectors.items()):
        store_vectors(manifest, f"n{i}.md", {h: v})
    notes = NoteVectors(manifest)
    query, c = np.array([0.5, 0.5, 0.3]), 0.7
    mean = np.mean(list(vectors.values()), axis=0)  # the mean of the stored unit vectors

    def centred(v: list[float]) -> float:
        u = np.asarray(v) / np.linalg.norm(v) - c * mean
        q = query - c * mean
        return float(u @ q / np.linalg.norm(u) / np.linalg.norm(q))

    expected = sorted(
        ((f"n{i}.md", centred(v)) for i, v in enumerate(vectors.values())), key=lambda x: -x[1]
    )
    got = notes.rank(list(query), 3, center=c)
    assert [p for p, _ in got] == [p for p, _ in expected]
    np.testing.assert_allclose(
        [s for _, s in got],
        [s * np.linalg.norm(query - c * mean) for _, s in expected],
        rtol=1e-5,
    )


@pytest.mark.parametrize("centering", [0.0, 0.5, 1.0])
def test_the_centred_list_is_the_brute_force_ranking_of_the_pool(
    hashed_index: VaultIndex, centering: float
) -> None:
    query, depth = "Actor 生命周期 BeginPlay", 30
    found = dense_candidates(hashed_index, query, depth, None, centering)
    pool = max(depth, CENTER_POOL) if centering else depth  # the plain list is only re-ordered
    # the store's hits with a cosine above 0, ties by id (`matching`), each cosine computed
    # from the cached vector (`exact_cosines`): the store's own rounds differently
    hits = hashed_index.store.search(found.vector, pool, None)
    cached = hashed_index.manifest.unit_vectors(i for i, _ in hits)
    plain = matching(exact_cosines(hits, cached, found.vector))
    assert found.cosine == dict(plain)  # what results report as dense_score
    store_cosine = dict(hits)
    assert all(abs(store_cosine[i] - s) < 1e-5 for i, s in plain)
    if centering == 0:
        assert found.ranking == plain[:depth]
        return
    mean = hashed_index.note_vectors.mean()
    chunks = hashed_index.manifest.chunks([i for i, _ in plain])
    vectors = hashed_index.manifest.vector_arrays(c.content_hash for c in chunks.values())
    q = np.asarray(found.vector) - centering * mean
    brute = {}
    for chunk_id, _ in plain:
        u = vectors[chunks[chunk_id].content_hash] - centering * mean
        brute[chunk_id] = float(u @ q / np.linalg.norm(u) / np.linalg.norm(q))
    expected = sorted(brute, key=lambda i: (-brute[i], i))[:depth]
    assert [i for i, _ in found.ranking] == expected
    np.testing.assert_allclose(
        [s for _, s in found.ranking], [brute[i] for i in expected], rtol=1e-5
    )


def test_results_report_the_plain_cosine(hashed_index: VaultIndex) -> None:
    results = hybrid_search(hashed_index, "材质参数 Material", SearchOptions(dense_centering=1.0))
    plain = dict(
        hashed_index.store.search(
            hashed_index.provider.embed_query("材质参数 Material"), CENTER_POOL, None
        )
    )
    scored = [r for r in results if r.dense_score is not None]
    assert scored and all(r.dense_score == pytest.approx(plain[r.chunk_id]) for r in scored)


def test_a_hub_close_to_everything_loses_its_place(tmp_path: Path) -> None:
    """Ten topic units along their own axes, a second, less typical unit on topic 3, and a hub
    that leans on every topic and mostly on what all units share. By plain cosine the hub
    comes right after topic 3's unit for a question on topic 3, ahead of the second unit on
    it; with the corpus mean taken off, the second unit on the topic comes first."""
    vault = tmp_path / "vault"
    vault.mkdir()
    index = VaultIndex(vault, tmp_path / "data", HashProvider())
    try:
        rng = np.random.default_rng(7)
        axes = np.linalg.qr(rng.normal(size=(index.provider.dimension, 12)))[0].T
        common = axes[10]
        units = {f"t{i}": 0.6 * axes[i] + 0.8 * common for i in range(10)}
        units["second"] = 0.3 * axes[3] + 0.6 * axes[11] + 0.74 * common
        units["hub"] = 0.2 * axes[:10].sum(axis=0) / np.sqrt(10) + 0.98 * common
        for name, vector in units.items():
            unit = [float(x) for x in vector / np.linalg.norm(vector)]
            store_vectors(index.manifest, f"{name}.md", {name: unit})
            index.store.upsert([f"{name}.md#0"], [unit], [name], [{"note_path": f"{name}.md"}])
        question = [float(x) for x in 0.6 * axes[3] + 0.8 * common]

        def order(centering: float) -> list[str]:
            found = dense_ranking(index, question, 12, None, centering)
            return [chunk_id.removesuffix(".md#0") for chunk_id, _ in found.ranking]

        assert order(0.0)[:3] == ["t3", "hub", "second"]
        assert order(1.0)[:3] == ["t3", "second", "hub"]
    finally:
        index.close()


def test_the_dense_list_does_not_depend_on_the_stores_order_of_ties(hashed_index) -> None:
    """Stores return exact ties in any order (the stand-in embedder gives many cosines of
    exactly 0): the candidate list, and so the fused results, must not follow that order."""
    index: VaultIndex = hashed_index
    vector = index.provider.embed_query("actor")
    store = index.store
    found = store.search(vector, CENTER_POOL)
    assert any(score <= 0.0 for _, score in found), "no tie at 0: the test would prove nothing"
    rankings = []
    for seed in range(4):  # the same hits, handed back in four different orders
        shuffled = list(found)
        np.random.default_rng(seed).shuffle(shuffled)

        class Shuffled:
            def __getattr__(self, name: str):
                return getattr(store, name)

            def search(self, *args, _hits=shuffled, **kwargs):
                return list(_hits)

        index.store = Shuffled()  # type: ignore[assignment]
        try:
            rankings.append(dense_ranking(index, vector, 50, None, 0.5).ranking)
        finally:
            index.store = store
    assert all(ranking == rankings[0] for ranking in rankings)
    assert rankings[0] and all(i in dict(found) and dict(found)[i] > 0 for i, _ in rankings[0])
