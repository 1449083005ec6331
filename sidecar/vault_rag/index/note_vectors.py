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
keyed to the manifest's change token, so a write in this process or another is seen.
"""

from __future__ import annotations

import threading
from collections import defaultdict

import numpy as np

from vault_rag.index.manifest import Manifest


class NoteVectors:
    """Centroids of every note with at least one embedded unit, kept in step with a manifest."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._lock = threading.Lock()
        self._token: tuple[int, int] | None = None
        self._signatures: dict[str, tuple[str, ...]] = {}  # note → its embedded content hashes
        self._vectors: dict[str, np.ndarray] = {}  # note → its centroid (normalised)
        self._sums: dict[str, tuple[np.ndarray, int]] = {}  # note → (sum of its vectors, count)
        self._paths: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
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
        scores = matrix @ vector
        order = np.argsort(-scores, kind="stable")
        out: list[tuple[str, float]] = []
        for i in order:
            if allowed is None or paths[i] in allowed:
                out.append((paths[i], float(scores[i])))
                if len(out) >= depth:
                    break
        return out

    def _sync(self) -> None:
        """Bring the cache up to the manifest's state (under the lock)."""
        token = self.manifest.change_token()
        if token != self._token:
            self._refresh()
            self._token = token

    def _centered_matrix(self, center: float) -> np.ndarray:
        cached = self._centered.get(center)
        if cached is None and self._mean is not None:
            shifted = self._matrix - center * self._mean
            norms = np.linalg.norm(shifted, axis=1, keepdims=True)
            cached = shifted / np.where(norms > 0, norms, 1.0)
            self._centered[center] = cached
        return cached if cached is not None else self._matrix

    def _refresh(self) -> None:
        hashes: dict[str, list[str]] = defaultdict(list)
        for note_path, content_hash in self.manifest.embedded_hashes():
            hashes[note_path].append(content_hash)
        signatures = {path: tuple(sorted(hs)) for path, hs in hashes.items()}
        changed = [p for p, sig in signatures.items() if self._signatures.get(p) != sig]
        if not changed and signatures.keys() == self._signatures.keys():
            return
        needed = {h for p in changed for h in signatures[p]}
        cached = self.manifest.vector_arrays(needed)
        for path in changed:
            rows = [cached[h] for h in signatures[path] if h in cached]
            if not rows:
                self._vectors.pop(path, None)
                self._sums.pop(path, None)
                continue
            total = np.stack(rows).sum(axis=0, dtype=np.float64)
            self._sums[path] = (total, len(rows))
            norm = float(np.linalg.norm(total))
            self._vectors[path] = (total / norm if norm > 0 else total).astype(np.float32)
        for gone in self._signatures.keys() - signatures.keys():
            self._vectors.pop(gone, None)
            self._sums.pop(gone, None)
        self._signatures = signatures
        count = sum(n for _, n in self._sums.values())
        self._mean = (
            (sum(total for total, _ in self._sums.values()) / count).astype(np.float32)
            if count
            else None
        )
        self._centered = {}
        self._paths = sorted(self._vectors)
        self._matrix = (
            np.stack([self._vectors[p] for p in self._paths])
            if self._paths
            else np.zeros((0, 0), dtype=np.float32)
        )
