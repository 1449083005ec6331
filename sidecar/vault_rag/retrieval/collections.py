"""One search over several collections (the vault and the sources beside it,
`source_indexes/collections.py`): each collection ranked on its own by `hybrid_search`, then the
lists merged fairly, rank by rank: each collection's best first, then each one's second, …

Scores of two indexes are not comparable (RRF over each index's own lists, BM25 statistics of
each corpus), and raw cosines are not either: notes in prose sit closer to every question than
code does. Rank by rank, a code tree of 50,000 units cannot drown a vault of 500 notes. Who
goes first at each rank is decided by evidence calibrated per collection: the vault leads,
unless a source's best result beats the vault's on either side, calibrated —
- dense: its cosine stands further above that source's own chance level, less what its size
  alone explains (`collection_null.py`), than the vault's does, and significantly so
  (p < `SIGNIFICANCE` under the source's null);
- lexical: its best BM25 on the size-independent scale (÷ ln passages, `retrieval/calibration.py`)
  reaches the bar of strong lexical evidence and the vault's does not match it.
A code question then gets its function first; a notes question beside an unrelated tree keeps
its note first. Without vectors or BM25 scores the vault leads. `docs/retrieval.md` ("Fair
merge") measures the variants tried: interleaving every result by calibrated score lifts code
further but costs a notes vault beside an unrelated tree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.calibration import LEXICAL
from vault_rag.retrieval.collection_null import CollectionNull, null_of
from vault_rag.retrieval.graph_route import fuse_route
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult, hybrid_search

SIGNIFICANCE = 0.01  # a source displaces the vault only on evidence chance reaches 1 time in 100


class UnknownCollectionError(ValueError):
    """A search named a collection that does not exist."""


def choose(
    available: list[str], wanted: list[str] | None, default_vault_only: bool = False
) -> list[str]:
    """The collections a search covers, in `available`'s order: `wanted` (each must exist),
    else all of them, or the vault alone when the setting says so."""
    if not wanted:
        return available[:1] if default_vault_only else list(available)
    unknown = [name for name in wanted if name not in available]
    if unknown:
        raise UnknownCollectionError(
            f"no collection named {', '.join(map(repr, unknown))}; there are: "
            + ", ".join(available)
        )
    return [name for name in available if name in wanted]


def merge_by_rank(lists: Mapping[str, list[SearchResult]], k: int) -> list[SearchResult]:
    """The `k` best of several collections' ranked lists, taken rank by rank (the fallback,
    see the module doc); each result says its collection."""
    ranked = [
        (rank, order, replace(result, collection=name))
        for order, (name, results) in enumerate(lists.items())
        for rank, result in enumerate(results)
    ]
    ranked.sort(key=lambda item: (item[0], item[1]))
    return [result for _, _, result in ranked[:k]]


def leader(
    lists: Mapping[str, list[SearchResult]],
    nulls: Mapping[str, CollectionNull | None],
    query: np.ndarray | None,
    passages: Mapping[str, int] | None = None,
) -> str | None:
    """The source that leads the merge (module doc), or None: the first collection leads.
    `passages`: each collection's passage count, for the lexical side (None: dense only)."""
    first, *others = lists
    dense = _dense_keys(lists, nulls, query)
    lexical = _lexical_keys(lists, passages or {})

    def leads(name: str) -> bool:
        null = nulls.get(name)
        by_dense = (
            name in dense
            and first in dense
            and dense[name] > dense[first]
            and null is not None
            and null.significant(dense[name], SIGNIFICANCE)
        )
        by_lexical = (
            name in lexical
            and lexical[name] >= LEXICAL.strong
            and lexical[name] > lexical.get(first, 0.0)
        )
        return by_dense or by_lexical

    strong = [name for name in others if leads(name)]
    return max(
        strong, key=lambda n: (dense.get(n, float("-inf")), lexical.get(n, 0.0)), default=None
    )


def _dense_keys(
    lists: Mapping[str, list[SearchResult]],
    nulls: Mapping[str, CollectionNull | None],
    query: np.ndarray | None,
) -> dict[str, float]:
    """Each calibratable collection's best cosine as its null's `top_key`."""
    keys: dict[str, float] = {}
    for name, results in lists.items():
        null = nulls.get(name)
        cosines = [r.dense_score for r in results if r.dense_score is not None]
        if null is not None and query is not None and cosines and null.mean.shape == query.shape:
            keys[name] = null.top_key(query, max(cosines))
    return keys


def _lexical_keys(
    lists: Mapping[str, list[SearchResult]], passages: Mapping[str, int]
) -> dict[str, float]:
    """Each collection's best BM25 ÷ ln(passages) (the evidence check's scale), where its
    index is big enough for BM25 to mean anything."""
    keys: dict[str, float] = {}
    for name, results in lists.items():
        count = passages.get(name, 0)
        scores = [r.lexical_score for r in results if r.lexical_score is not None]
        if count >= LEXICAL.min_passages and scores:
            keys[name] = max(scores) / math.log(count)
    return keys


def merge_fair(
    lists: Mapping[str, list[SearchResult]],
    nulls: Mapping[str, CollectionNull | None],
    query: np.ndarray | None,
    k: int,
    passages: Mapping[str, int] | None = None,
) -> list[SearchResult]:
    """The `k` best of the lists, rank by rank, the `leader` first at each rank."""
    lead = leader(lists, nulls, query, passages)
    if lead is None:
        return merge_by_rank(lists, k)
    return merge_by_rank({lead: lists[lead]} | {n: r for n, r in lists.items() if n != lead}, k)


def search_collections(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> list[SearchResult]:
    """`hybrid_search` in each index, merged fairly (one index: its own list, unchanged).
    Every collection shares the vault's model, so the question is embedded once for all."""
    merged = _merged(indexes, query, options)
    if options.graph_route is None:
        return merged
    # A relational question: the code graph's units as one more list (`graph_route.py`).
    return fuse_route(merged, options.graph_route(query), options.k, options.rrf_k)


def _merged(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> list[SearchResult]:
    if len(indexes) == 1:
        name, index = next(iter(indexes.items()))
        return [replace(r, collection=name) for r in hybrid_search(index, query, options)]
    embedded = _embed_once(indexes, query, options)
    shared = replace(options, query_vector=embedded) if embedded is not None else options
    lists = {name: hybrid_search(index, query, shared) for name, index in indexes.items()}
    nulls = {name: null_of(index) for name, index in indexes.items()}
    passages = {name: index.lexical.count() for name, index in indexes.items()}
    return merge_fair(lists, nulls, _unit(embedded), options.k, passages)


def _embed_once(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> tuple[float, ...] | None:
    """The question's embedding; None when the dense side is off or no collection has vectors
    to search (then none embeds it either). A model that fails raises here, as the first
    collection's search would."""
    if options.query_vector is not None:
        return options.query_vector
    if "dense" not in options.retrievers or not query.strip():
        return None
    if not any(_has_vectors(index) for index in indexes.values()):
        return None
    return tuple(next(iter(indexes.values())).provider.embed_query(query))


def _has_vectors(index: VaultIndex) -> bool:
    """Whether a dense search of `index` would embed the question (`dense.dense_candidates`)."""
    try:
        return bool(index.store.count())
    except StoreUnavailableError:
        return False


def _unit(vector: tuple[float, ...] | None) -> np.ndarray | None:
    """`vector` scaled to length 1, for the collections' nulls; None for none or zero."""
    if vector is None:
        return None
    array = np.asarray(vector, float)
    norm = np.linalg.norm(array)
    return array / norm if norm > 0 else None
