"""One search over several collections (the vault and the sources beside it,
`source_indexes/collections.py`): each collection ranked on its own by `hybrid_search`, then the
lists merged by the routing decision (`routing.py`): each collection's share of the merged list
from evidence calibrated per collection, and a weighted rank-by-rank merge.

Scores of two indexes are not comparable (RRF over each index's own lists, BM25 statistics of
each corpus), and raw cosines are not either: notes in prose sit closer to every question than
code does. So the lists are never interleaved by score; what is compared is calibrated:
- dense: how far a collection's best cosine stands above its own chance level for this
  question, less what its size alone explains (`collection_null.py`), and whether that is
  significant (p < `SIGNIFICANCE` under its null);
- lexical: its best BM25 on the size-independent scale (÷ ln passages, `retrieval/calibration.py`),
  and which of the question's words its vocabulary has (`known_words`).
With equal weights the merge is rank by rank, the vault first at each rank: a code tree of
50,000 units cannot drown a vault of 500 notes. `docs/retrieval.md` ("Fair merge", "Routing")
measures the variants tried.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from vault_rag.index.bm25.tokenize import tokenize
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.calibration import LEXICAL
from vault_rag.retrieval.code_files import names_of
from vault_rag.retrieval.collection_null import CollectionNull, null_of
from vault_rag.retrieval.graph_route import fuse_route
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult, hybrid_search
from vault_rag.retrieval.routing import Routing, decide, merge_weighted, vocabulary_words

SIGNIFICANCE = 0.01  # dense evidence counts only where chance reaches it 1 time in 100


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


def decide_for(
    query: str,
    lists: Mapping[str, list[SearchResult]],
    nulls: Mapping[str, CollectionNull | None],
    vector: np.ndarray | None,
    passages: Mapping[str, int] | None = None,
    names: Mapping[str, frozenset[str]] | None = None,
    words: Mapping[str, frozenset[str]] | None = None,
) -> Routing:
    """The routing decision (`routing.decide`) from each list's best scores, calibrated:
    dense by the collection's null (None: not calibratable), lexical by its passage count
    (None: dense only). `names`: each code collection's symbol and file names; `words`: the
    question's words each collection's index knows (`known_words`)."""
    dense = _dense_keys(lists, nulls, vector)
    significant = {
        name: (null := nulls.get(name)) is not None and null.significant(key, SIGNIFICANCE)
        for name, key in dense.items()
    }
    lexical = _lexical_keys(lists, passages or {})
    return decide(query, list(lists), dense, significant, lexical, names or {}, words)


def known_words(
    indexes: Mapping[str, VaultIndex], query: str, passages: Mapping[str, int]
) -> dict[str, frozenset[str]]:
    """The question's vocabulary words (`routing.vocabulary_words`) each index knows, for the
    indexes big enough for their vocabulary to say something (as BM25's: `LEXICAL`)."""
    terms = vocabulary_words(tokenize(query))
    if not terms:
        return {}
    return {
        name: index.lexical.known(terms)
        for name, index in indexes.items()
        if passages.get(name, 0) >= LEXICAL.min_passages
    }


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


def search_collections(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> list[SearchResult]:
    """`search_routed`'s results alone."""
    return search_routed(indexes, query, options)[0]


def search_routed(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> tuple[list[SearchResult], Routing | None]:
    """`hybrid_search` in each index, merged by the routing decision (`routing.py`), and the
    decision (None with one index: its own list, unchanged). Every collection shares the
    vault's model, so the question is embedded once for all."""
    merged, routing = _merged(indexes, query, options)
    if options.graph_route is None:
        return merged, routing
    # A relational question: the code graph's units as one more list (`graph_route.py`).
    return fuse_route(merged, options.graph_route(query), options.k, options.rrf_k), routing


def route(
    indexes: Mapping[str, VaultIndex],
    query: str,
    lists: Mapping[str, list[SearchResult]],
    vector: np.ndarray | None,
) -> Routing:
    """The routing decision for `lists`, with each index's null, size and code names."""
    nulls = {name: null_of(index) for name, index in indexes.items()}
    passages = {name: index.lexical.count() for name, index in indexes.items()}
    names = {name: found for name, index in indexes.items() if (found := names_of(index))}
    words = known_words(indexes, query, passages)
    return decide_for(query, lists, nulls, vector, passages, names, words)


def _merged(
    indexes: Mapping[str, VaultIndex], query: str, options: SearchOptions
) -> tuple[list[SearchResult], Routing | None]:
    if len(indexes) == 1:
        name, index = next(iter(indexes.items()))
        return [replace(r, collection=name) for r in hybrid_search(index, query, options)], None
    embedded = _embed_once(indexes, query, options)
    shared = replace(options, query_vector=embedded) if embedded is not None else options
    lists = {name: hybrid_search(index, query, shared) for name, index in indexes.items()}
    routing = route(indexes, query, lists, _unit(embedded))
    return merge_weighted(lists, routing.weights(), options.k), routing


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
