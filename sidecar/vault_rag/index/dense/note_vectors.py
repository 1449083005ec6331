"""Note-level dense signal: each note's centroid, the normalised mean of its units' vectors.

A question is often answered by a note as a whole rather than by one unit of it (the note is
*about* the topic while each small unit only touches it). Ranking notes by the cosine of the
question to their centroid, and giving the candidates of the top notes a bounded RRF bonus,
measured +.036 R@5 on the English Help set and +.013 MRR@10 on the Chinese one, level on the
sample vault (docs/retrieval.md, "Note-level signals"). Title/alias "note cards" and a title
BM25 field were measured too and lost; they are not built.

The same cache gives the corpus mean of all unit vectors, which dense search subtracts (in
part) before comparing, to demote "hub" passages close to every question (lists of links, the
list of callout types): see `retrieval/dense.py`.

The centroids cost no model call: they are derived from the manifest's vector cache (the
vectors every backend was given) and rebuilt incrementally, only for notes whose set of
embedded units changed since the last search. The cache lives with the `VaultIndex` and is
keyed to the manifest's change token, so a write in this process or another is seen. A write in
this process names the notes it touched (`Manifest.notes_touched`), so only those are read
again; after another process's write (or an unnamed one) every note's units are compared — at
10,000 notes ~0.3 s, which the server used to pay on the first search after every write.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from vault_rag.index.manifest import Manifest

if TYPE_CHECKING:
    from vault_rag.index.dense.snapshot import DenseSnapshot


class NoteVectors:
    """Centroids of every note with at least one embedded unit, kept in step with a manifest."""

    def __init__(
        self, manifest: Manifest, snapshot: Callable[[], DenseSnapshot | None] | None = None
    ) -> None:
        self.manifest = manifest
        # The saved dense snapshot, when current: the first sync takes the centroids and the
        # mean from it instead of reading every cached vector (`index/dense/snapshot.py`).
        self._snapshot = snapshot
        self._seeded = False
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._token: tuple[int, int] | None = None
        self._signatures: dict[str, tuple[str, ...]] = {}  # note → its embedded content hashes
        self._vectors: dict[str, np.ndarray] = {}  # note → its centroid (normalised)
        self._sums: dict[str, tuple[np.ndarray, int]] = {}  # note → (sum of its vectors, count)
        self._paths: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._total: np.ndarray | None = None  # sum of every embedded unit vector
        self._count = 0
        self._mean: np.ndarray | None = None
        self._centered: dict[float, np.ndarray] = {}  # centering weight → centred centroids

    def mean(self) -> np.ndarray | None:
        """The mean of every embedded unit vector (None: nothing embedded yet)."""
        with self._lock:
            self._sync()
            return self._mean

    def rank(
        self, query: list[float], depth: int, allowed: set[str] | None = None, center: float = 0.0
    ) -> list[tuple[str, float]]:
        """(note path, cosine) of the `depth` notes whose centroid is closest to `query`; with
        `center` = c > 0, both sides have c × the corpus mean taken off first (the cosine of
        the centred vectors), as dense search compares units."""
        with self._lock:
            self._sync()
            paths, matrix, mean = self._paths, self._matrix, self._mean
            if center > 0 and mean is not None:
                matrix = self._centered_matrix(center)
        if not paths or depth <= 0:
            return []
        vector = np.asarray(query, dtype=np.float32)
        if matrix.shape[1] != vector.shape[0]:
            return []  # a model change mid-rebuild: no note signal rather than a wrong one
        if center > 0 and mean is not None:
            vector = vector - center * mean
        scores = -(matrix @ vector)  # ascending = best first
        if allowed is None and depth < scores.size:
            # The `depth` best without sorting every note: all scores up to the depth-th
            # (ties included), sorted stably in note order, as the full stable sort gives.
            kth = np.partition(scores, depth - 1)[depth - 1]
            top = np.flatnonzero(scores <= kth)
            order = top[np.argsort(scores[top], kind="stable")]
        else:
            order = np.argsort(scores, kind="stable")
        out: list[tuple[str, float]] = []
        for i in order:
            if allowed is None or paths[i] in allowed:
                out.append((paths[i], -float(scores[i])))
                if len(out) >= depth:
                    break
        return out

    def export(self) -> tuple[list[str], np.ndarray, np.ndarray | None]:
        """(note paths, their centroid rows, the corpus mean), in step with the manifest."""
        with self._lock:
            self._sync()
            return self._paths, self._matrix, self._mean

    def _current(self) -> tuple[list[str], np.ndarray]:
        """The note paths and their centroid rows, in step with the manifest."""
        with self._lock:
            self._sync()
            return self._paths, self._matrix

    def _sync(self) -> None:
        """Bring the cache up to the manifest's state (under the lock)."""
        token = self.manifest.change_token()
        if token != self._token:
            if self._token is None and self._seed():
                self._token = token
                return
            if self._seeded:  # seeded without per-note sums: build them all this once
                self._reset()
                self._seeded = False
            touched = None
            if self._token is not None and token[1] == self._token[1]:  # only this process
                touched = self.manifest.notes_touched(self._token[0])
            self._refresh(touched)
            self._token = token

    def _seed(self) -> bool:
        """Take the centroids and the mean from a current dense snapshot: bit for bit what a
        full refresh computes, since a fresh `NoteVectors` built them (`build_snapshot`)."""
        snapshot = self._snapshot() if self._snapshot is not None else None
        if snapshot is None:
            return False
        self._paths = snapshot.note_paths
        self._matrix = snapshot.centroids
        self._mean = snapshot.mean
        self._seeded = True
        return True

    def _centered_matrix(self, center: float) -> np.ndarray:
        cached = self._centered.get(center)
        if cached is None and self._mean is not None:
            shifted = self._matrix - center * self._mean
            norms = np.linalg.norm(shifted, axis=1, keepdims=True)
            cached = shifted / np.where(norms > 0, norms, 1.0)
            self._centered[center] = cached
        return cached if cached is not None else self._matrix

    def _refresh(self, touched: set[str] | None = None) -> None:
        """Bring the centroids up to date: of the `touched` notes only, or of every note."""
        hashes: dict[str, list[str]] = defaultdict(list)
        for note_path, content_hash in self._embedded_hashes(touched):
            hashes[note_path].append(content_hash)
        signatures = {path: tuple(sorted(hs)) for path, hs in hashes.items()}
        if touched is not None:  # the other notes keep theirs
            signatures = {
                **{p: s for p, s in self._signatures.items() if p not in touched},
                **signatures,
            }
        changed = [p for p, sig in signatures.items() if self._signatures.get(p) != sig]
        if not changed and signatures.keys() == self._signatures.keys():
            return
        needed = {h for p in changed for h in signatures[p]}
        cached = self.manifest.vector_arrays(needed)
        for path in changed:
            self._drop(path)
            rows = [cached[h] for h in signatures[path] if h in cached]
            if not rows:
                continue
            total = np.stack(rows).sum(axis=0, dtype=np.float64)
            self._sums[path] = (total, len(rows))
            self._total = total if self._total is None else self._total + total
            self._count += len(rows)
            norm = float(np.linalg.norm(total))
            self._vectors[path] = (total / norm if norm > 0 else total).astype(np.float32)
        for gone in self._signatures.keys() - signatures.keys():
            self._drop(gone)
        self._signatures = signatures
        # The corpus mean from a running sum: a write costs the notes it changed.
        self._mean = (
            (self._total / self._count).astype(np.float32)
            if self._count and self._total is not None
            else None
        )
        self._centered = {}
        paths = sorted(self._vectors)
        if paths == self._paths and self._matrix.shape[0] == len(paths):
            # The same notes: a new matrix (readers may hold the old one) with the changed
            # rows replaced, instead of stacking every centroid again.
            matrix = self._matrix.copy()
            row = {p: i for i, p in enumerate(paths)} if changed else {}
            for path in changed:
                if path in row:
                    matrix[row[path]] = self._vectors[path]
            self._matrix = matrix
            return
        self._paths = paths
        self._matrix = (
            np.stack([self._vectors[p] for p in self._paths])
            if self._paths
            else np.zeros((0, 0), dtype=np.float32)
        )

    def _drop(self, path: str) -> None:
        """Forget a note's centroid and take its vectors out of the running sum."""
        self._vectors.pop(path, None)
        old = self._sums.pop(path, None)
        if old is not None and self._total is not None:
            self._total = self._total - old[0]
            self._count -= old[1]

    def _embedded_hashes(self, notes: set[str] | None) -> list[tuple[str, str]]:
        if notes is None:
            return self.manifest.embedded_hashes()
        wanted = sorted(notes)
        rows: list[tuple[str, str]] = []
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            marks = ",".join("?" * len(part))
            rows += self.manifest.db.execute(
                # `+embedded`: look the notes up by path (chunks_note), not every embedded row
                "SELECT note_path, content_hash FROM chunks WHERE +embedded=1"
                f" AND note_path IN ({marks})",
                part,
            ).fetchall()
        return rows
