"""Each collection's null: how its units score against a question by chance (issue 27).

Raw cosines are not comparable across collections: notes in prose sit closer to any question
than code does, so a cosine of .80 can be ordinary in the vault and outstanding in a code tree
(docs/retrieval.md, "Fair merge"). What is comparable is how far a result stands above its
own collection's background for *this* question. For a query vector q and the collection's
unit vectors u (mean m, covariance S), the cosine q·u of a unit drawn at random has mean q·m
and variance qᵀSq, both exact and cheap once m and S are known; a result's calibrated score is
its z = (q·u − q·m) / sqrt(qᵀSq).

The best of N random units reaches about Φ⁻¹((N − 0.375) / (N + 0.25)) standard deviations by
chance alone (Blom's approximation of the expected maximum of N normals: 1.5 for 10 units,
3.5 for 2,500, 4.3 for 50,000), so a large tree's best result would look surprising merely for
being large. A collection's evidence for a question is therefore its best z *less* that chance
maximum (`top_key`), and it is significant when it exceeds what the maximum of N reaches with
probability `p` under the null: the maximum's spread is Gumbel with scale 1 / sqrt(2 ln N), so
the bound is −ln(−ln(1 − p)) / sqrt(2 ln N) (p = .01: 1.15 for 2,500 units).

The statistics are derived from the manifest's vector cache (no model call) and kept per data
dir until its count of embedded units changes (an edit that keeps the count keeps the old null:
a mean and covariance over hundreds of units move little with one unit).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from vault_rag.index.vault_index import VaultIndex

MIN_UNITS = 8  # below this a covariance says nothing; the collection is not calibrated
_JOIN = "FROM chunks c JOIN vectors v ON v.content_hash = c.content_hash"
_ROWS = f"SELECT v.vector {_JOIN}"
_COUNT = f"SELECT count(*) {_JOIN}"  # embedded units: the cache's key
_cache: dict[str, tuple[int, CollectionNull | None]] = {}  # by data dir: (units, null)
_lock = threading.Lock()


@dataclass(frozen=True)
class CollectionNull:
    mean: np.ndarray  # mean unit vector
    cov: np.ndarray  # covariance of the unit vectors
    units: int

    def top_key(self, query: np.ndarray, best_cosine: float) -> float:
        """The best cosine as standard deviations above this collection's chance level for
        `query`, less the chance maximum of its `units` (see the module doc)."""
        centre = float(query @ self.mean)
        spread = math.sqrt(max(float(query @ self.cov @ query), 1e-12))
        chance_max = NormalDist().inv_cdf((self.units - 0.375) / (self.units + 0.25))
        return (best_cosine - centre) / spread - chance_max

    def significant(self, key: float, p: float) -> bool:
        """Whether a `top_key` is beyond what chance reaches with probability `p`."""
        return key > -math.log(-math.log(1 - p)) / math.sqrt(2 * math.log(self.units))


def null_of(index: VaultIndex) -> CollectionNull | None:
    """The collection's null (None: too few embedded units, or vectors of mixed sizes)."""
    count = index.manifest.db.execute(_COUNT).fetchone()[0]
    with _lock:
        cached = _cache.get(str(index.data_dir))
        if cached is not None and cached[0] == count:
            return cached[1]
    null = _compute(index)
    with _lock:
        _cache[str(index.data_dir)] = (count, null)
    return null


def _compute(index: VaultIndex) -> CollectionNull | None:
    rows = [np.frombuffer(blob, dtype=np.float32) for (blob,) in index.manifest.db.execute(_ROWS)]
    if len(rows) < MIN_UNITS or len({row.shape[0] for row in rows}) != 1:
        return None
    matrix = np.vstack(rows).astype(np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms > 0, norms, 1.0)
    return CollectionNull(matrix.mean(axis=0), np.cov(matrix, rowvar=False), len(rows))
