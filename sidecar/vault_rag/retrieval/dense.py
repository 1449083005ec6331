"""The dense candidate list of hybrid search: the vector store's nearest units, re-ordered with
the corpus mean partly taken off both sides.

Why centring: the bundled model's cosines are compressed into a narrow band with a large
component common to every text, so a few "hub" passages — lists of links, the list of callout
types — sit close to almost any question and crowd the top of the list (on the English Help
vault's questions one such unit was in the top 10 for 8 of 55). Subtracting c × the mean of
all unit vectors from the units and from the query before the cosine (c = `dense_centering`)
demotes whatever is close to everything; measured in docs/retrieval.md ("Hubs"). The store
still finds the candidates by plain cosine (its index cannot be re-centred on every write):
the re-scoring works on a pool of at least `CENTER_POOL` of them, with the units' vectors read
from the manifest's vector cache, so every backend behaves alike. `dense_score` in results
stays the plain cosine, which the answer graph's calibrated thresholds are measured in.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from vault_rag.chunking.types import Chunk
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.vault_index import VaultIndex

CENTER_POOL = 100  # store candidates re-scored when centring (measured: 50 loses some)
log = logging.getLogger(__name__)


@dataclass
class DenseCandidates:
    ranking: list[tuple[str, float]] = field(default_factory=list)  # fusion order, best first
    cosine: dict[str, float] = field(default_factory=dict)  # chunk id → plain cosine
    vector: list[float] | None = None  # the query's embedding (None: no dense side)
    chunks: dict[str, Chunk] = field(default_factory=dict)  # the candidates read for re-scoring


def dense_candidates(
    index: VaultIndex,
    query: str,
    depth: int,
    allowed: set[str] | None,
    centering: float,
    vector: Sequence[float] | None = None,
) -> DenseCandidates:
    """The `depth` best units for `query` by (centred) cosine; none while the vector store
    cannot be reached (BM25 still serves, and `index.store_error` says why). `vector`: the
    query already embedded by the index's model (None: embedded here)."""
    try:
        if not index.store.count():
            return DenseCandidates()
        embedded = list(vector) if vector is not None else index.provider.embed_query(query)
        return dense_ranking(index, embedded, depth, allowed, centering)
    except StoreUnavailableError as exc:
        log.warning("dense search skipped: %s", exc)
        index.store_error = str(exc)
        return DenseCandidates()


def dense_ranking(
    index: VaultIndex,
    vector: list[float],
    depth: int,
    allowed: set[str] | None,
    centering: float,
) -> DenseCandidates:
    """`dense_candidates` for an embedded query (raises `StoreUnavailableError`)."""
    pool = max(depth, CENTER_POOL) if centering > 0 else depth
    found = index.store.search(vector, pool, sorted(allowed) if allowed is not None else None)
    index.store_error = None
    vectors = index.manifest.unit_vectors([chunk_id for chunk_id, _ in found])
    found = matching(exact_cosines(found, vectors, vector))
    result = DenseCandidates(ranking=found[:depth], cosine=dict(found), vector=vector)
    mean = index.note_vectors.mean() if centering > 0 and found else None
    if mean is None or mean.shape[0] != len(vector):
        return result
    result.chunks = index.manifest.chunks([chunk_id for chunk_id, _ in found])
    scores = _centered_scores(found, vectors, vector, centering * mean)
    order = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
    result.ranking = [(chunk_id, scores[chunk_id]) for chunk_id in order[:depth]]
    return result


def exact_cosines(
    found: list[tuple[str, float]], vectors: Mapping[str, np.ndarray], query: list[float]
) -> list[tuple[str, float]]:
    """The hits with their cosine computed here from the cached vectors (a hit without one
    keeps the store's). Searches round differently (Chroma's float32 SIMD sums, the dense
    snapshot's matrix product), and a unit must score the same whichever search found it:
    a search in the CLI's own process and one by the sidecar print the same results."""
    q = np.asarray(query, dtype=np.float32)
    q_norm = float(np.linalg.norm(q)) or 1.0
    out: list[tuple[str, float]] = []
    for chunk_id, cosine in found:
        unit = vectors.get(chunk_id)
        if unit is not None and unit.shape == q.shape:
            norm = float(np.linalg.norm(unit)) or 1.0
            cosine = float(np.dot(unit, q)) / (norm * q_norm)
        out.append((chunk_id, cosine))
    return out


def ordered(found: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A store's (id, cosine) hits best first, ties by id (as BM25's). Stores return exact ties
    in an arbitrary order (the stand-in embedder gives many exact zeros), which made the fused
    results of one query differ from one process to the next."""
    return sorted(found, key=lambda hit: (-hit[1], hit[0]))


def matching(found: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """`ordered` without units at cosine <= 0: they share nothing with the query, so they are
    no evidence for the vault-wide dense list (a focused note's list keeps them: the note
    competes even when the question misses it, `retrieval/focus.py`)."""
    return ordered([(i, s) for i, s in found if s > 0.0])


def _centered_scores(
    found: list[tuple[str, float]],
    vectors: Mapping[str, np.ndarray],
    query: list[float],
    shift: np.ndarray,
) -> dict[str, float]:
    """cos(unit − shift, query − shift) per candidate; a unit whose vector is not in the cache
    (it should always be) keeps its plain cosine."""
    q = np.asarray(query, dtype=np.float32) - shift
    q_norm = float(np.linalg.norm(q)) or 1.0
    scores: dict[str, float] = {}
    for chunk_id, cosine in found:
        unit = vectors.get(chunk_id)
        if unit is None or unit.shape != shift.shape:
            scores[chunk_id] = cosine
            continue
        shifted = unit - shift
        norm = float(np.linalg.norm(shifted)) or 1.0
        scores[chunk_id] = float(shifted @ q) / (norm * q_norm)
    return scores
