"""Retrieve evidence: vault queries and web queries fan out with `Send`, one task each, into
the `documents` reducer; `check_evidence` decides whether the web is needed after all. A task
that fails is recorded, not raised (`nodes/tasks.py`): the other searches still answer."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Literal, NotRequired

from langchain_core.runnables import RunnableConfig
from langgraph.types import Send
from typing_extensions import TypedDict  # pydantic on Python 3.11 needs this one

from vault_rag.graph.config import Configuration, Resources, get_resources
from vault_rag.graph.evidence import search_options, searched_indexes
from vault_rag.graph.focus import search_focus, selection_query
from vault_rag.graph.nodes.common import progress
from vault_rag.graph.nodes.tasks import after_retrieval, task_failed
from vault_rag.graph.sources import doc_from_page, doc_from_result
from vault_rag.graph.state import Aspect, Doc, Focus, State
from vault_rag.retrieval.calibration import calibration_for
from vault_rag.retrieval.collections import search_routed
from vault_rag.retrieval.graph_route import pair_ask
from vault_rag.retrieval.routing import Routing
from vault_rag.source_indexes.graph_route import route_for
from vault_rag.source_indexes.pair_links import link_pairs, linked_results

PAIR_TOP = 3  # a pair question: the linked units of this many top hits of each collection join


class QueryTask(TypedDict):
    """The payload of one retrieval task."""

    aspect: int
    query: str
    focus: NotRequired[Focus | None]  # the note the turn is asked about (vault tasks only)


def _sends(
    aspects: list[Aspect],
    node: str,
    key: Literal["vault_queries", "web_queries"],
    focus: Focus | None = None,
) -> list[Send]:
    sends = []
    for aspect in aspects:
        queries = list(aspect[key])
        # Asking about a selection: the selected text is one more vault query per aspect.
        selection = selection_query(focus) if key == "vault_queries" else ""
        if selection and selection.casefold() not in (q.casefold() for q in queries):
            queries.append(selection)
        for query in queries:
            task = QueryTask(aspect=aspect["index"], query=query)
            if key == "vault_queries" and focus:
                task["focus"] = focus
            sends.append(Send(node, task))
    return sends


def web_available(configuration: Configuration, resources: Resources) -> bool:
    return configuration.web_mode == "hybrid" and resources.web is not None


def fan_out_retrieval(state: State, config: RunnableConfig) -> list[Send]:
    """One task per vault query; in hybrid mode with web "always", one per web query too."""
    configuration = Configuration.from_runnable_config(config)
    sends = _sends(state.aspects, "retrieve_vault", "vault_queries", state.focus)
    if configuration.web_when == "always" and web_available(configuration, get_resources(config)):
        sends += _sends(state.aspects, "web_search", "web_queries")
    return sends


async def retrieve_vault(task: QueryTask, config: RunnableConfig) -> dict[str, Any]:
    """Hybrid search (dense + BM25) of the vault for one query."""
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    options = search_options(configuration, resources, search_focus(task.get("focus"), resources))
    try:
        # The embedding model and the stores are synchronous: keep the event loop free.
        indexes = searched_indexes(resources, configuration.collections)
        # A relational question about a known symbol: the code graph's units join the list.
        route = route_for(resources.settings, resources.index.data_dir, indexes)
        options = replace(options, graph_route=route) if route is not None else options
        results, routing = await asyncio.to_thread(search_routed, indexes, task["query"], options)
        pairs: list[str] = []
        if pair_ask(task["query"]) is not None:  # "the note about X and the code of it"
            results, pairs = await asyncio.to_thread(_with_pairs, resources, indexes, results)
    except Exception as exc:  # e.g. a remote embedding server failing this one query
        return task_failed("retrieve_vault", exc, task["aspect"], task["query"])
    graph = [
        f"{r.note_path}: {r.graph_reason}"
        for r in results
        if r.graph_reason and not r.graph_reason.startswith("pair: ")
    ]
    progress(
        "retrieve_vault",
        aspect=task["aspect"],
        query=task["query"],
        found=len(results),
        **({"graph": graph} if graph else {}),  # why the graph route added units
        **({"pairs": pairs} if pairs else {}),  # why the linked note / code joined
        # several collections: how much each contributed (the pane's "searched: …")
        **({"searched": _shares(routing)} if routing else {}),
    )
    # Nothing found writes nothing: an empty write would empty the turn's documents.
    update: dict[str, Any] = {}
    if results:
        update["documents"] = [
            doc_from_result(r, task["aspect"], rank) for rank, r in enumerate(results)
        ]
    if results and results[0].rerank_fallback:  # the search worked, in the fused order
        update["notes"] = [
            f"The re-ranker was not used ({results[0].rerank_fallback}); "
            "vault passages are in the fused search order."
        ]
    return update


def _with_pairs(
    resources: Resources, indexes: dict[str, Any], results: list[Any]
) -> tuple[list[Any], list[str]]:
    """A pair question: the top hits' linked units (note ↔ code) join the passages, after
    the hits; and why each joined, for the trace."""
    linked = link_pairs(resources.settings, resources.index.data_dir, indexes, results)
    added = linked_results(indexes, linked, PAIR_TOP)
    return linked + added, [f"{r.note_path}: {r.graph_reason}" for r in added]


def _shares(routing: Routing) -> list[dict[str, Any]]:
    return [
        {"name": c.name, "weight": c.weight, "reasons": list(c.reasons)}
        for c in routing.collections
    ]


async def web_search(task: QueryTask, config: RunnableConfig) -> dict[str, Any]:
    """Tavily search + extract for one web query. A failure becomes a note, never an error."""
    web = get_resources(config).web
    if web is None:
        return {}
    try:
        result = await web.search(task["query"])
    except Exception as exc:  # `WebSearch` reports its own errors; anything else lands here
        return task_failed("web_search", exc, task["aspect"], task["query"])
    progress("web_search", aspect=task["aspect"], query=task["query"], found=len(result.pages))
    update: dict[str, Any] = {}
    if result.pages:
        update["documents"] = [doc_from_page(p, task["aspect"]) for p in result.pages]
    if result.error:
        update["notes"] = [f"Web search problem: {result.error}"]
    return update


def weak_aspects(aspects: list[Aspect], documents: list[Doc], threshold: float) -> list[int]:
    """Aspects whose best vault hit is not similar enough to any of its queries. The threshold
    is calibrated per embedding model: their cosine scales differ a lot."""
    best: dict[int, float] = {a["index"]: -1.0 for a in aspects}
    for doc in documents:
        if doc.get("kind") != "vault":
            continue
        for aspect in doc.get("aspects", []):
            best[aspect] = max(best.get(aspect, -1.0), doc.get("dense_score") or -1.0)
    return [aspect for aspect, score in best.items() if score < threshold]


async def check_evidence(state: State, config: RunnableConfig) -> dict[str, Any]:
    """Decide whether to search the web now: hybrid mode, web "weak", vault evidence weak for
    some aspect, and not searched yet this turn. Without a key there is a note instead.
    Aspects whose every vault search failed are dropped first (`tasks.after_retrieval`)."""
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    counts = {"vault": 0, "web": 0}
    for doc in state.documents:
        counts[doc.get("kind", "vault")] += 1
    aspects, failure_notes = after_retrieval(state.aspects, state.documents, state.failures)
    update: dict[str, Any] = {"web_aspects": []}
    if len(aspects) < len(state.aspects):
        update["aspects"] = aspects
    if configuration.web_mode == "hybrid" and resources.web is None:
        update["notes"] = [
            f"Web search is on (hybrid mode) but {resources.web_missing}; "
            "only the vault was searched."
        ]
    elif (
        web_available(configuration, resources)
        and configuration.web_when == "weak"
        and not state.web_searched
    ):
        threshold = configuration.weak_evidence_threshold
        if threshold is None:
            threshold = calibration_for(resources.index.provider.model_id).weak_evidence
        weak = weak_aspects(aspects, state.documents, threshold)
        if weak:
            where = ", ".join(resources.web.include_domains) if resources.web else ""
            update |= {
                "web_aspects": weak,
                "web_searched": True,
                "notes": [
                    "Your notes had little on this, so the web was searched too"
                    + (f" ({where})." if where else ".")
                ],
            }
    if failure_notes:
        update["notes"] = [*failure_notes, *update.get("notes", [])]
    progress(
        "check_evidence",
        vault=counts["vault"],
        web=counts["web"],
        web_for=update["web_aspects"],
        **({"failed": len(state.failures)} if state.failures else {}),
    )
    return update


def route_after_evidence(state: State) -> list[Send] | Literal["grade"]:
    if not state.web_aspects:
        return "grade"
    wanted = [a for a in state.aspects if a["index"] in state.web_aspects]
    return _sends(wanted, "web_search", "web_queries") or "grade"


def docs_for_aspect(docs: list[Doc], aspect: int) -> list[Doc]:
    return [d for d in docs if aspect in d.get("aspects", [])]
