"""A run with nothing changed (the no-op restart): no note read, the projections untouched, the
vector cache pruned only when it holds leftovers; the BM25 state saved once for the next
process. Real embedded Chroma and BM25, the stand-in embedder (the model plays no part)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.indexer import Indexer
from vault_rag.index.lexical import SNAPSHOT_DIR
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
