"""A run with nothing changed (the no-op restart): no note read, the projections untouched, the
vector cache pruned only when it holds leftovers; the BM25 state saved once for the next
process. Real embedded Chroma and BM25, the stand-in embedder (the model plays no part)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.bm25.lexical import SNAPSHOT_DIR
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import LEXICAL_DIR, VaultIndex


def test_a_no_op_run_skips_the_prune_unless_vectors_are_left_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    for i in range(6):
        (vault / f"n{i}.md").parent.mkdir(parents=True, exist_ok=True)
        (vault / f"n{i}.md").write_text(f"# Note {i}\n\nText about topic {i}.\n", encoding="utf-8")
    index = VaultIndex(vault, tmp_path / "data", HashProvider())
    try:
        first = Indexer(index).run()
        assert first.notes_changed == 6 and first.chunks_pending == 0
        snapshots = list((tmp_path / "data" / LEXICAL_DIR / SNAPSHOT_DIR).iterdir())
        assert len(snapshots) == 1  # saved by the run: the next process loads it

        prunes: list[int] = []
        real = index.manifest.prune_vectors
        monkeypatch.setattr(index.manifest, "prune_vectors", lambda: prunes.append(1) or real())
        again = Indexer(index).run()
        assert (again.notes_changed, again.chunks_embedded, again.chunks_reused) == (0, 0, 0)
        assert prunes == []  # nothing changed, nothing left over
        assert list((tmp_path / "data" / LEXICAL_DIR / SNAPSHOT_DIR).iterdir()) == snapshots

        # A vector no unit uses (an interrupted run's leftover): the next run prunes it.
        index.manifest.cache_vectors({"leftover": [0.0] * index.provider.dimension})
        Indexer(index).run()
        assert prunes == [1]
        assert not index.manifest.vector_arrays(["leftover"])
    finally:
        index.close()


# -- the store-side reconcile skipped while nothing changed on either side --------------------
def write_vault(vault: Path, n: int = 6) -> None:
    vault.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (vault / f"n{i}.md").write_text(f"# Note {i}\n\nText about topic {i}.\n", encoding="utf-8")


def open_lazy(vault: Path, data: Path) -> VaultIndex:
    from vault_rag.serving.context import open_index
    from vault_rag.settings import load_settings

    settings = load_settings(vault=vault, data_dir=data, embeddings="hash")
    return open_index(settings, lazy_store=True)


def agree(index: VaultIndex) -> bool:
    ids = index.store.ids()
    return ids == index.manifest.chunk_ids() == index.manifest.embedded_ids()


def test_a_no_op_run_leaves_chroma_closed_and_a_change_still_reaches_it(tmp_path: Path) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    write_vault(vault)
    index = open_lazy(vault, data)  # nothing recorded yet: Chroma opened at once
    try:
        assert index.store._opened is not None  # type: ignore[attr-defined]
        assert Indexer(index).run().notes_changed == 6
        assert index.store_in_sync()
    finally:
        index.close()

    index = open_lazy(vault, data)
    try:
        again = Indexer(index).run()
        assert (again.notes_changed, again.chunks_embedded, again.chunks_pending) == (0, 0, 0)
        assert index.store._opened is None  # type: ignore[attr-defined]  # never needed
    finally:
        index.close()

    (vault / "n1.md").write_text("# Note 1\n\nNew words entirely.\n", encoding="utf-8")
    (vault / "n7.md").write_text("# Note 7\n\nA new note.\n", encoding="utf-8")
    (vault / "n2.md").unlink()
    index = open_lazy(vault, data)
    try:
        assert index.store._opened is None  # type: ignore[attr-defined]  # files unchanged
        run = Indexer(index).run()
        assert (run.notes_changed, run.notes_deleted) == (2, 1)
        assert agree(index)  # opened on first use; the deleted note's units left it too
        assert index.store_in_sync()  # recorded again for the next run
    finally:
        index.close()


def test_a_store_or_manifest_changed_behind_the_marker_is_reconciled(tmp_path: Path) -> None:
    import shutil

    vault, data = tmp_path / "vault", tmp_path / "data"
    write_vault(vault)
    index = open_lazy(vault, data)
    try:
        Indexer(index).run()
        # Another writer dropped a note's units from the manifest but not from the store
        # (a crash between the two): the chunk ids differ from the marker's.
        gone = index.manifest.delete_note("n3.md")
        assert gone and not index.store_in_sync()
    finally:
        index.close()
    index = open_lazy(vault, data)
    try:
        assert index.store._opened is not None  # type: ignore[attr-defined]  # not in sync
        Indexer(index).run()  # n3.md is back from the vault, its orphans deleted first
        assert agree(index) and index.store_in_sync()
    finally:
        index.close()

    shutil.rmtree(data / "chroma")  # the store lost everything (set aside, deleted by hand)
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()  # as a new process: Chroma caches clients by path
    index = open_lazy(vault, data)
    try:
        assert not index.store_in_sync()
        run = Indexer(index).run()
        assert run.chunks_embedded == 0 and run.chunks_reused == 6  # from the vector cache
        assert agree(index)
    finally:
        index.close()


def test_the_marker_reads_the_manifest_once_per_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening the index and the indexer's reconcile both ask whether the store is in sync; the
    manifest's ids are read and digested once until a transaction changes them."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    write_vault(vault)
    index = open_lazy(vault, data)
    try:
        Indexer(index).run()
        reads: list[int] = []
        real = index.manifest.chunk_ids
        monkeypatch.setattr(index.manifest, "chunk_ids", lambda: reads.append(1) or real())
        assert index.store_in_sync() and index.store_in_sync()
        assert reads == []  # memoised since the run recorded the marker
        index.manifest.delete_note("n3.md")  # a transaction: a new state
        assert not index.store_in_sync()
        assert reads == [1]
        assert not index.store_in_sync()
        assert reads == [1]
    finally:
        index.close()


def test_the_server_records_the_agreement_for_the_next_start(tmp_path: Path) -> None:
    from test_server_helpers import LiveServer, wait_idle, wait_until
    from vault_rag.api import create_app
    from vault_rag.settings import load_settings

    vault, data = tmp_path / "vault", tmp_path / "data"
    write_vault(vault)
    index = open_lazy(vault, data)
    try:
        Indexer(index).run()
    finally:
        index.close()
    (vault / "n4.md").write_text("# Note 4\n\nChanged while the server was down.\n", "utf-8")
    settings = load_settings(vault=vault, data_dir=data, embeddings="hash", server_watch=False)
    with LiveServer(create_app(settings, token="t" * 32), token="t" * 32) as live:
        wait_until(lambda: live.state.writer.status.reconciled, 60)
        wait_idle(live)
        assert agree(live.state.index)
    # The start-up re-indexed n4.md (so the marker no longer held); the writer recorded the
    # agreement again when it stopped (or after a quiet spell), for the next start.
    index = open_lazy(vault, data)
    try:
        assert index.store_in_sync()
        assert index.store._opened is None  # type: ignore[attr-defined]
    finally:
        index.close()


def test_a_sidecar_start_with_nothing_changed_reads_no_id_back_from_the_store(
    tmp_path: Path,
) -> None:
    # The writer may look for pending chunks before the watcher's start-up scan job arrives;
    # it too trusts the marker instead of reading every id back (0.6 s at 72k units).
    from test_server_helpers import LiveServer, wait_idle, wait_until
    from vault_rag.api import create_app
    from vault_rag.serving.context import open_index
    from vault_rag.settings import load_settings

    vault, data = tmp_path / "vault", tmp_path / "data"
    write_vault(vault, 12)
    index = open_lazy(vault, data)
    try:
        Indexer(index).run()
    finally:
        index.close()
    settings = load_settings(vault=vault, data_dir=data, embeddings="hash", server_watch=True)
    index = open_index(settings)
    reads: list[int] = []
    real = index.store.ids
    index.store.ids = lambda: reads.append(1) or real()  # type: ignore[method-assign]
    try:
        with LiveServer(create_app(settings, token="t" * 32, index=index), token="t" * 32) as live:
            wait_until(lambda: live.state.writer.status.reconciled, 60)
            wait_idle(live)
            assert live.state.writer.indexer.store_synced
        assert reads == []
    finally:
        index.close()
