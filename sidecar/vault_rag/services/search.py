"""Hybrid search of the vault (dense + BM25, fused), as `POST /v1/search` and the MCP tool
`search_notes` serve it."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.collections import UnknownCollectionError, search_routed
from vault_rag.retrieval.hybrid import SearchResult, search_options
from vault_rag.retrieval.routing import Routing
from vault_rag.services.errors import bad_input
from vault_rag.services.parts import VaultParts, visible
from vault_rag.source_indexes.graph_route import route_for
from vault_rag.source_indexes.pair_links import link_pairs


@dataclass
class SearchOutcome:
    results: list[SearchResult]
    took_ms: float
    routing: Routing | None = None  # several collections: how much each contributed, and why


def search(
    parts: VaultParts,
    query: str,
    *,
    k: int | None = None,
    folder: str | None = None,
    tag: str | None = None,
    max_k: int | None = None,
    collections: list[str] | None = None,
) -> SearchOutcome:
    """The `k` best passages for `query` (default `top_k`), best first. `max_k`: the largest
    `k` this caller accepts (`invalid_request` above it). A hit from, or shown through, an
    excluded folder is never returned (excluded notes are not indexed; this holds even while
    an exclusion pushed a moment ago is still being applied). `collections`: "vault" and the
    sources' names (`sources/`), default every one (or the vault alone, by the
    `default_collections` setting); a name that is neither is `invalid_request`."""
    if max_k is not None and k is not None and k > max_k:
        raise bad_input(f"k must be at most {max_k}, got {k}", k=k, max_k=max_k)
    options = search_options(
        parts.settings, prior=parts.prior, k=k, folder=folder or None, tag=tag or None
    )
    started = time.perf_counter()
    indexes = searched(parts, collections)
    # A relational question about a known symbol: the code graph's units join (None: no code)
    route = route_for(parts.settings, parts.index.data_dir, indexes)
    options = replace(options, graph_route=route) if route is not None else options
    results, routing = search_routed(indexes, query, options)
    # Note ↔ code links (only with a code source searched: else the results as they are)
    results = link_pairs(parts.settings, parts.index.data_dir, indexes, results)
    took = (time.perf_counter() - started) * 1000
    kept = [  # (excluded folders are the vault's: a source has its own include/exclude)
        _shown(parts, r)
        for r in results
        if r.collection != "vault" or visible(parts, r.note_path, r.origin)
    ]
    return SearchOutcome(results=kept, took_ms=round(took, 1), routing=routing)


def _shown(parts: VaultParts, result: SearchResult) -> SearchResult:
    """The hit without what an excluded folder holds (embedding notes, linked notes)."""
    if result.collection == "vault":
        result = replace(result, embedded_in=[p for p in result.embedded_in if visible(parts, p)])
    if result.linked:
        linked = [
            u for u in result.linked if u.collection != "vault" or visible(parts, u.note_path)
        ]
        result = replace(result, linked=linked)
    return result


def searched(parts: VaultParts, collections: list[str] | None) -> dict[str, VaultIndex]:
    """The indexes to search: the server's sources (`source_indexes/service.py`) when it has them,
    else the vault's own index alone."""
    sources = getattr(parts, "sources", None)
    try:
        if sources is not None:
            return sources.indexes(collections)
        if collections and collections != ["vault"]:
            raise UnknownCollectionError("only the vault is searched here: there are no sources")
    except UnknownCollectionError as exc:
        raise bad_input(str(exc), collections=collections) from exc
    return {"vault": parts.index}


def check_query(query: str, max_chars: int = 2000) -> str:
    """A query with words in it, at most `max_chars` long (`invalid_request` otherwise)."""
    if not query.strip():
        raise bad_input("the query is empty: ask about something")
    if len(query) > max_chars:
        raise bad_input(f"the query is longer than {max_chars} characters", length=len(query))
    return query
