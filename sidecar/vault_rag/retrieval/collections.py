"""One search over several collections (the vault and the sources beside it,
`source_indexes/collections.py`): each collection ranked on its own by `hybrid_search`, then the
lists merged fairly, rank by rank: each collection's best first, then each one's second, …

Scores of two indexes are not comparable (RRF over each index's own lists, BM25 statistics of
each corpus), and raw cosines are not either: notes in prose sit closer to every question than
code does. Rank by rank, a code tree of 50,000 units cannot drown a vault of 500 notes. Who
goes first at each rank is decided by evidence calibrated per collection
(`collection_null.py`): the vault leads, unless a source's best result stands further above
that source's own chance level (less what its size alone explains) than the vault's does, and
significantly so (p < `SIGNIFICANCE` under the source's null). A code question then gets its
function first; a notes question beside an unrelated tree keeps its note first. When the
collections cannot be calibrated (no vectors: BM25 only, or too few units) the vault leads.
`docs/retrieval.md` ("Fair merge") measures the variants tried: interleaving every result by
calibrated score lifts code further but costs a notes vault beside an unrelated tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.collection_null import CollectionNull, null_of
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
) -> str | None:
    """The source that leads the merge (module doc), or None: the first collection leads."""
    if query is None:
        return None
    keys: dict[str, float] = {}
    for name, results in lists.items():
        null = nulls.get(name)
        cosines = [r.dense_score for r in results if r.dense_score is not None]
        if null is not None and cosines and null.mean.shape == query.shape:
            keys[name] = null.top_key(query, max(cosines))
    first, *others = lists
    if first not in keys:
        return None
    strong = [
        name
        for name in others
        if name in keys
        and keys[name] > keys[first]
        and (null := nulls[name]) is not None
        and null.significant(keys[name], SIGNIFICANCE)
    ]
    return max(strong, key=keys.__getitem__, default=None)


def merge_fair(
    lists: Mapping[str, list[SearchResult]],
    nulls: Mapping[str, CollectionNull | None],
    query: np.ndarray | None,
    k: int,
) -> list[SearchResult]:
    """The `k` best of the lists, rank by rank, the `leader` first at each rank."""
    lead = leader(lists, nulls, query)
    if lead is None:
        return merge_by_rank(lists, k)
    return merge_by_rank({lead: lists[lead]} | {n: r for n, r in lists.items() if n != lead}, k)


def search_collections(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> list[SearchResult]:
    """`hybrid_search` in each index, merged fairly (one index: its own list, unchanged)."""
    lists = {name: hybrid_search(index, query, options) for name, index in indexes.items()}
    if len(lists) == 1:
        name, results = next(iter(lists.items()))
        return [replace(r, collection=name) for r in results]
    nulls = {name: null_of(index) for name, index in indexes.items()}
    return merge_fair(lists, nulls, _query_vector(indexes, query, options), options.k)


def _query_vector(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> np.ndarray | None:
    """The question's embedding (every collection shares the vault's model); None when the
    dense side is off or the model cannot be reached."""
    if "dense" not in options.retrievers or not query.strip():
        return None
    try:
        vector = np.asarray(next(iter(indexes.values())).provider.embed_query(query), float)
    except (StoreUnavailableError, OSError, RuntimeError):
        return None
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else None
