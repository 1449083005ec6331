"""A read-only copy of the index's dense side, memory-mapped by a process that only searches.

Why: a cold `vault-rag search` with no sidecar running used to import chromadb and load its
whole HNSW index (0.35 + 0.73 s CPU at 72k units), then read every cached vector from SQLite to
build the note centroids (0.74 s), all to answer one query. The snapshot holds every embedded
unit's normalised vector, each note's centroid and the corpus mean in one file: mapping it
costs milliseconds, and an exact search over 72k × 384 vectors is one matrix product (~15 ms),
so that process needs neither chromadb nor the vector cache.

It is derived from the manifest (the units it marks embedded, the vector cache, `NoteVectors`)
and stamped with the manifest's revision, which every write transaction bumps; it is read only
while the two are equal, so a stale snapshot is never used, only rewritten. `vault-rag index`
writes it at the end of a run and the sidecar's writer when it stops (not on every idle: at 10k
notes it is ~130 MB). Only for embedded Chroma, whose scale is one machine.

This module is the file and its search; `snapshot_build.py` builds it from an index and serves
it in place of the store.

File: MAGIC, the header's length (8 bytes, little-endian), the header (JSON), then at 64-byte
aligned offsets the unit matrix (float32, n × d), each unit's note row (int32, n), the centroids
(float32, m × d) and the mean (float32, d).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SNAPSHOT_FILE = "dense.snapshot"
MAGIC = b"VAULT-RAG-DENSE-1\n"
_ALIGN = 64
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DenseSnapshot:
    revision: int  # the manifest revision it was built at
    model_id: str
    unit_ids: list[str]  # sorted
    note_paths: list[str]  # sorted: the rows of `centroids`
    units: np.ndarray  # (n, d) float32, each row normalised
    unit_notes: np.ndarray  # (n,) int32: row in `note_paths`
    centroids: np.ndarray  # (m, d) float32, as `NoteVectors` builds them
    mean: np.ndarray | None  # (d,) float32: the mean of every embedded unit vector

    @classmethod
    def load(cls, path: Path) -> DenseSnapshot | None:
        """The snapshot at `path`, or None when it is absent or unreadable (then it is
        rebuilt by the next run; nothing is lost: it is derived data)."""
        try:
            with path.open("rb") as f:
                if f.read(len(MAGIC)) != MAGIC:
                    raise ValueError("not a dense snapshot")
                length = int.from_bytes(f.read(8), "little")
                header = json.loads(f.read(length).decode("utf-8"))
            size = path.stat().st_size
            arrays = {
                name: _mapped(path, size, *header["arrays"][name])
                for name in ("units", "unit_notes", "centroids", "mean")
            }
            return cls(
                revision=int(header["revision"]),
                model_id=str(header["model_id"]),
                unit_ids=list(header["unit_ids"]),
                note_paths=list(header["note_paths"]),
                units=arrays["units"],
                unit_notes=arrays["unit_notes"],
                centroids=arrays["centroids"],
                mean=arrays["mean"] if arrays["mean"].size else None,
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("dense snapshot %s unreadable (%s): not used", path, exc)
            return None

    def search(
        self, vector: Sequence[float], k: int, note_paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """(unit id, cosine) of the `k` nearest units, exactly (a vector store's contract)."""
        if k <= 0 or not self.unit_ids:
            return []
        query = np.asarray(vector, dtype=np.float32)
        if query.shape[0] != self.units.shape[1]:
            return []
        norm = float(np.linalg.norm(query))
        query = query / norm if norm > 0 else query
        rows: np.ndarray | None = None
        if note_paths is not None:
            wanted = set(note_paths)
            notes = [i for i, p in enumerate(self.note_paths) if p in wanted]
            rows = np.flatnonzero(np.isin(self.unit_notes, notes))
            if not rows.size:
                return []
        scores = (self.units if rows is None else self.units[rows]) @ query
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        ids = self.unit_ids
        if rows is None:
            return [(ids[i], float(scores[i])) for i in top]
        return [(ids[int(rows[i])], float(scores[i])) for i in top]


def _mapped(path: Path, size: int, offset: int, dtype: str, shape: list[int]) -> np.ndarray:
    count = int(np.prod(shape)) if shape else 0
    if offset + count * np.dtype(dtype).itemsize > size:
        raise ValueError("truncated")
    if count == 0:
        return np.zeros(shape, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=tuple(shape))


def save_snapshot(snapshot: DenseSnapshot, path: Path) -> None:
    """Write `snapshot` to `path` atomically (a reader sees the old file or the new one)."""
    arrays = {
        "units": snapshot.units,
        "unit_notes": snapshot.unit_notes,
        "centroids": snapshot.centroids,
        "mean": snapshot.mean if snapshot.mean is not None else np.zeros(0, dtype=np.float32),
    }
    header: dict[str, object] = {
        "revision": snapshot.revision,
        "model_id": snapshot.model_id,
        "unit_ids": snapshot.unit_ids,
        "note_paths": snapshot.note_paths,
    }
    # Offsets depend on the header's length, which holds them: size it with placeholders of
    # the widest value first (offsets fit in 20 digits).
    header["arrays"] = {n: [10**19, str(a.dtype), list(a.shape)] for n, a in arrays.items()}
    start = _aligned(len(MAGIC) + 8 + len(json.dumps(header).encode("utf-8")))
    placement: dict[str, list[object]] = {}
    offset = start
    for name, array in arrays.items():
        placement[name] = [offset, str(array.dtype), list(array.shape)]
        offset = _aligned(offset + array.nbytes)
    header["arrays"] = placement
    encoded = json.dumps(header).encode("utf-8")
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temp.open("wb") as f:
            f.write(MAGIC + len(encoded).to_bytes(8, "little") + encoded)
            for name, array in arrays.items():
                f.write(b"\0" * (int(placement[name][0]) - f.tell()))  # type: ignore[call-overload]
                f.write(np.ascontiguousarray(array).tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN
