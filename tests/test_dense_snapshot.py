"""The dense snapshot (index/dense/snapshot.py): what a process that only searches maps instead
of opening Chroma and reading every cached vector. It is exact, current or unused, rebuilt by the
next run or the sidecar's stop, and harmless when damaged. Real manifest, real embedded Chroma,
real BM25; the stand-in embedder on the bundled sample vault."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.dense.note_vectors import NoteVectors
from vault_rag.index.dense.snapshot import SNAPSHOT_FILE, DenseSnapshot
from vault_rag.index.snapshot_build import SnapshotSearchStore
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

QUERIES = ["Actor 生命周期 BeginPlay", "材质实例 参数", "garbage collection UObject", "蓝图 性能"]


@pytest.fixture
def indexed(tmp_path: Path, sample_vault: Path) -> tuple[Path, Path]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    shutil.copytree(sample_vault, vault)
    index = VaultIndex(vault, data, HashProvider())
    try:
        Indexer(index).run()
    finally:
        index.close()
    return vault, data


def open_search_only(vault: Path, data: Path) -> VaultIndex:
    from vault_rag.serving.context import open_index
    from vault_rag.settings import load_settings

    settings = load_settings(vault=vault, data_dir=data, embeddings="hash")
    return open_index(settings, search_only=True)


def test_a_run_leaves_a_current_snapshot_whose_search_is_exact(indexed: tuple[Path, Path]) -> None:
    vault, data = indexed
    index = VaultIndex(vault, data, HashProvider())
    try:
        snapshot = index.current_snapshot()
        assert snapshot is not None and (data / SNAPSHOT_FILE).is_file()
        embedded = index.manifest.embedded_ids()
        assert set(snapshot.unit_ids) == embedded == index.store.ids()
        cached = index.manifest.unit_vectors(embedded)
        for text in QUERIES:
            query = np.asarray(index.provider.embed_query(text), dtype=np.float32)
            brute = {
                i: float(v @ query / np.linalg.norm(v) / np.linalg.norm(query))
                for i, v in cached.items()
            }
            got = snapshot.search(query.tolist(), 20)
            assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
            best = sorted(brute.values(), reverse=True)[:20]
            np.testing.assert_allclose([s for _, s in got], best, atol=1e-5)
            assert all(abs(brute[i] - s) < 1e-5 for i, s in got)
            # only within some notes (a folder or tag filter)
            notes = sorted({c.note_path for c in index.manifest.chunks(embedded).values()})[:3]
            within = snapshot.search(query.tolist(), 50, notes)
            chunks = index.manifest.chunks(i for i, _ in within)
            assert within and {c.note_path for c in chunks.values()} <= set(notes)
            allowed = {
                i for i, c in index.manifest.chunks(embedded).items() if c.note_path in notes
            }
            assert {i for i, _ in within} == allowed  # k above their count: all of them
    finally:
        index.close()


def test_search_only_never_opens_chroma_and_finds_what_chroma_finds(
    indexed: tuple[Path, Path],
) -> None:
    vault, data = indexed
    options = SearchOptions(k=8)
    normal = VaultIndex(vault, data, HashProvider())
    try:
        expected = [[r.to_dict() for r in hybrid_search(normal, q, options)] for q in QUERIES]
    finally:
        normal.close()
    index = open_search_only(vault, data)
    try:
        assert isinstance(index.store, SnapshotSearchStore)
        got = [[r.to_dict() for r in hybrid_search(index, q, options)] for q in QUERIES]
        assert index.store._store._opened is None  # type: ignore[attr-defined]
    finally:
        index.close()
    assert got == expected  # same units, same scores (HNSW is exact at this size)


def test_a_write_makes_it_stale_and_the_next_run_rewrites_it(indexed: tuple[Path, Path]) -> None:
    vault, data = indexed
    index = open_search_only(vault, data)
    try:
        assert isinstance(index.store, SnapshotSearchStore)
        before = index.store.count()
        gone = index.manifest.delete_note(sorted(index.manifest.notes())[0])
        assert gone and index.current_snapshot() is None  # another revision: never read
        # every read now goes to the store, opened on first use
        assert index.store.count() == before
        assert index.store._store._opened is not None  # type: ignore[attr-defined]
    finally:
        index.close()
    index = VaultIndex(vault, data, HashProvider())
    try:
        Indexer(index).run()  # puts the note back and writes a current snapshot
        snapshot = index.current_snapshot()
        assert snapshot is not None and set(snapshot.unit_ids) == index.store.ids()
    finally:
        index.close()


def test_a_write_that_bumps_no_revision_still_makes_it_stale(indexed: tuple[Path, Path]) -> None:
    # An older version of the program writes without the revision: the unit count differs.
    vault, data = indexed
    index = VaultIndex(vault, data, HashProvider())
    try:
        assert index.current_snapshot() is not None
        some = sorted(index.manifest.embedded_ids())[0]
        other = sqlite3.connect(index.manifest.path)  # that program, in another process
        with other:
            other.execute("UPDATE chunks SET embedded=0 WHERE id=?", (some,))
        other.close()
        assert index.current_snapshot() is None
    finally:
        index.close()


def test_note_vectors_seeded_from_it_equal_a_fresh_build_and_follow_writes(
    indexed: tuple[Path, Path],
) -> None:
    vault, data = indexed
    index = VaultIndex(vault, data, HashProvider())
    try:
        assert index.current_snapshot() is not None
        fresh = NoteVectors(index.manifest)  # reads every cached vector
        seeded = index.note_vectors  # takes them from the snapshot
        paths, matrix, mean = seeded.export()
        assert isinstance(matrix, np.memmap)
        want_paths, want_matrix, want_mean = fresh.export()
        assert paths == want_paths
        assert np.array_equal(matrix, want_matrix) and np.array_equal(mean, want_mean)
        query = index.provider.embed_query(QUERIES[0])
        assert seeded.rank(query, 5, center=0.5) == fresh.rank(query, 5, center=0.5)

        index.manifest.delete_note(paths[0])  # a write: the seeded cache builds itself afresh
        after_paths, after_matrix, after_mean = seeded.export()
        rebuilt = NoteVectors(index.manifest).export()
        assert after_paths == rebuilt[0] == paths[1:]
        assert np.array_equal(after_matrix, rebuilt[1]) and np.array_equal(after_mean, rebuilt[2])
    finally:
        index.close()


@pytest.mark.parametrize(
    "damage", ["garbage", "truncated", "empty"], ids=["garbage", "truncated", "empty"]
)
def test_a_damaged_snapshot_is_ignored_and_rewritten(
    indexed: tuple[Path, Path], damage: str
) -> None:
    vault, data = indexed
    path = data / SNAPSHOT_FILE
    raw = path.read_bytes()
    path.write_bytes(
        {
            "garbage": b"\x00\xffnot a snapshot" * 10,
            "truncated": raw[: len(raw) // 2],
            "empty": b"",
        }[damage]
    )
    assert DenseSnapshot.load(path) is None
    index = open_search_only(vault, data)
    try:
        assert not isinstance(index.store, SnapshotSearchStore)  # Chroma, as before
        assert hybrid_search(index, QUERIES[0], SearchOptions(k=5))
    finally:
        index.close()
    index = VaultIndex(vault, data, HashProvider())
    try:
        Indexer(index).run()  # nothing changed in the vault, but the snapshot is rewritten
        assert index.current_snapshot() is not None
        assert path.read_bytes() == raw
    finally:
        index.close()


def test_a_snapshot_that_cannot_be_written_never_fails_the_run(
    indexed: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    vault, data = indexed
    (data / SNAPSHOT_FILE).unlink()
    (data / SNAPSHOT_FILE).mkdir()  # in the way: the atomic replace cannot put a file there
    (vault / "Another.md").write_text("# Another\n\nA change, so the run writes.\n", "utf-8")
    index = VaultIndex(vault, data, HashProvider())
    try:
        with caplog.at_level("WARNING"):
            run = Indexer(index).run()
        assert run.notes_changed == 1 and run.chunks_pending == 0
        assert "dense snapshot not written" in caplog.text
        assert index.current_snapshot() is None
    finally:
        index.close()
    assert not [p for p in data.iterdir() if p.name.endswith(".tmp")]  # no leftover


def test_the_sidecar_writes_it_when_it_stops(indexed: tuple[Path, Path]) -> None:
    from test_server_helpers import LiveServer, wait_idle, wait_until
    from vault_rag.api import create_app
    from vault_rag.settings import load_settings

    vault, data = indexed
    (vault / "Snapshot probe.md").write_text(
        "# Snapshot probe\n\nA note the sidecar indexed after the snapshot was written.\n", "utf-8"
    )
    settings = load_settings(vault=vault, data_dir=data, embeddings="hash", server_watch=False)
    with LiveServer(create_app(settings, token="t" * 32), token="t" * 32) as live:
        wait_until(lambda: live.state.writer.status.reconciled, 60)
        wait_idle(live)
        assert live.state.index.current_snapshot() is None  # stale while it runs
    index = VaultIndex(vault, data, HashProvider())
    try:
        snapshot = index.current_snapshot()
        assert snapshot is not None
        probe = index.manifest.chunk_ids("Snapshot probe.md")
        assert probe and probe <= set(snapshot.unit_ids)
    finally:
        index.close()
