"""One search over several collections (the vault and the sources beside it,
`source_indexes/collections.py`): each collection ranked on its own by `hybrid_search`, then the
lists merged by rank, so one collection's scale never decides the order. Scores of two
indexes are not comparable (RRF over each index's own lists, BM25 statistics of each corpus),
and a code tree of 50,000 units would otherwise drown a vault of 500 notes: the merge takes
each collection's best first, then each one's second, … (ties in the order asked: the vault
first). `docs/retrieval.md` measures it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult, hybrid_search


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
    """The `k` best of several collections' ranked lists, taken rank by rank (see the module
    doc); each result says its collection."""
    ranked = [
        (rank, order, replace(result, collection=name))
        for order, (name, results) in enumerate(lists.items())
        for rank, result in enumerate(results)
    ]
    ranked.sort(key=lambda item: (item[0], item[1]))
    return [result for _, _, result in ranked[:k]]


def search_collections(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> list[SearchResult]:
    """`hybrid_search` in each index, merged by rank (one index: its own list, unchanged)."""
    lists = {name: hybrid_search(index, query, options) for name, index in indexes.items()}
    if len(lists) == 1:
        name, results = next(iter(lists.items()))
        return [replace(r, collection=name) for r in results]
    return merge_by_rank(lists, options.k)
