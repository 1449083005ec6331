"""One question answered by the answer graph, without streaming (MCP `ask_vault`). The
streaming `POST /v1/ask` runs the same `graph.run.run_question` and sends its events."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from vault_rag.services.errors import ServiceError, bad_input
from vault_rag.services.search import check_query

WebMode = Literal["strict", "hybrid"]


async def ask(
    resources: Any,
    question: str,
    mode: WebMode | None = None,
    *,
    graph: Any = None,
    collections: list[str] | None = None,
) -> Any:
    """The graph's `AskResult` for `question` (extractive when no model is configured): the
    answer, its citations and the model usage. The question stands alone (no thread). An
    error event of the run becomes `ServiceError(500, its code)`. `collections`: as for
    `services.search.search` (an unknown name is `invalid_request` before anything runs)."""
    from vault_rag.graph.events import ErrorEvent, FinalEvent
    from vault_rag.graph.run import AskResult, run_question

    check_query(question)
    configuration = resources.defaults
    if mode is not None:
        configuration = replace(configuration, web_mode=mode)
    if collections:
        _check_collections(resources, collections)
        configuration = replace(configuration, collections=list(collections))
    async for event in run_question(question, resources, configuration=configuration, graph=graph):
        if isinstance(event, ErrorEvent):
            raise ServiceError(500, event.code, event.message)
        if isinstance(event, FinalEvent):
            return AskResult.from_final(event)
    raise ServiceError(500, "no_result", "the answer graph ended without a result")


def _check_collections(resources: Any, collections: list[str]) -> None:
    from vault_rag.retrieval.collections import UnknownCollectionError

    try:
        if resources.sources is not None:
            resources.sources.indexes(collections)
        elif collections != ["vault"]:
            raise UnknownCollectionError("only the vault is searched here: there are no sources")
    except UnknownCollectionError as exc:
        raise bad_input(str(exc), collections=collections) from exc
