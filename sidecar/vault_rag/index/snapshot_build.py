"""Building the dense snapshot (`dense_snapshot.py`) from an index, refreshing the one on disk,
and a store that searches it while it is current. Kept apart from the file format so that the
index (`vault_index.py`) can load a snapshot without importing what builds one."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from vault_rag.index.dense.note_vectors import NoteVectors
from vault_rag.index.dense.snapshot import SNAPSHOT_FILE, DenseSnapshot, save_snapshot
from vault_rag.index.vault_index import VaultIndex

log = logging.getLogger(__name__)


def build_snapshot(index: VaultIndex) -> DenseSnapshot | None:
    """The snapshot of `index` as it is now; None when some embedded unit has no cached vector
    (it should always have one) or a write came in meanwhile."""
    manifest = index.manifest
    revision = manifest.revision()
    # A fresh build, not the index's running one: its mean is a running sum that writes have
    # added to and taken from, and a new process must seed exactly what it would compute.
    note_paths, centroids, mean = NoteVectors(manifest).export()
    dimension = int(manifest.get_meta("dimension") or 0) or (
        centroids.shape[1] if centroids.size else 0
    )
    count = manifest.counts()["embedded"]
    row_of = {p: i for i, p in enumerate(note_paths)}
    # Filled row by row: at 72k units one copy of the vectors (110 MB), not three.
    units = np.empty((count, dimension), dtype=np.float32)
    unit_ids: list[str] = []
    unit_notes = np.empty(count, dtype=np.int32)
    for chunk_id, note_path, blob in manifest.embedded_unit_vectors():
        vector = np.frombuffer(blob, dtype=np.float32)
        row = len(unit_ids)
        if row >= count or vector.shape[0] != dimension or note_path not in row_of:
            return None  # a write meanwhile, or vectors of another size
        units[row] = vector
        unit_notes[row] = row_of[note_path]
        unit_ids.append(chunk_id)
    if len(unit_ids) != count:
        return None  # an embedded unit without a cached vector
    norms = np.linalg.norm(units, axis=1, keepdims=True)
    np.divide(units, np.where(norms > 0, norms, 1.0), out=units)
    if manifest.revision() != revision:
        return None
    return DenseSnapshot(
        revision=revision,
        model_id=index.model_id or index.provider.model_id,
        unit_ids=unit_ids,
        note_paths=list(note_paths),
        units=units,
        unit_notes=unit_notes,
        centroids=centroids.astype(np.float32),
        mean=mean,
    )


def refresh_snapshot(index: VaultIndex) -> bool:
    """Write the snapshot of an embedded-Chroma index unless the one on disk is current.
    True when one was written. A failure only costs the next cold search its speed."""
    if index.store_info.kind != "chroma":
        return False
    path = index.data_dir / SNAPSHOT_FILE
    if index.current_snapshot() is not None:
        return False
    try:
        snapshot = build_snapshot(index)
        if snapshot is None:
            return False
        save_snapshot(snapshot, path)
    except Exception as exc:  # (a full disk, a locked file on Windows, a database error)
        log.warning("dense snapshot not written: %s", exc)
        return False
    index.forget_snapshot()
    return True


class SnapshotSearchStore:
    """Embedded Chroma for a process that only searches (`vault-rag search` with no sidecar):
    `count` and `search` come from the snapshot while it is current; anything else, and every
    call once a write made the snapshot stale, goes to the store, which is opened (and
    chromadb imported) only then. The exact search finds what the store's HNSW search finds
    (at ef_search 400 it holds 99-100 of the exact 100 nearest: `stores.chroma.SEARCH_EF`)."""

    def __init__(self, store: object, index: VaultIndex) -> None:
        self._store = store
        self._index = index

    def _snapshot(self) -> DenseSnapshot | None:
        return self._index.current_snapshot()

    def count(self) -> int:
        snapshot = self._snapshot()
        return len(snapshot.unit_ids) if snapshot is not None else self._store.count()  # type: ignore[attr-defined]

    def search(
        self, vector: Sequence[float], k: int, note_paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        snapshot = self._snapshot()
        if snapshot is None:
            return self._store.search(vector, k, note_paths)  # type: ignore[attr-defined,no-any-return]
        return snapshot.search(vector, k, note_paths)

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)
