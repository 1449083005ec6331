"""One question answered by the answer graph, without streaming (MCP `ask_vault`). The
streaming `POST /v1/ask` runs the same `graph.run.run_question` and sends its events."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from vault_rag.services.errors import ServiceError
from vault_rag.services.search import check_query

WebMode = Literal["strict", "hybrid"]


async def ask(
    resources: Any, question: str, mode: WebMode | None = None, *, graph: Any = None
) -> Any:
    """The graph's `AskResult` for `question` (extractive when no model is configured): the
    answer, its citations and the model usage. The question stands alone (no thread). An
    error event of the run becomes `ServiceError(500, its code)`."""
    from vault_rag.graph.events import ErrorEvent, FinalEvent
    from vault_rag.graph.run import AskResult, run_question

    check_query(question)
    configuration = resources.defaults
    if mode is not None:
        configuration = replace(configuration, web_mode=mode)
    async for event in run_question(question, resources, configuration=configuration, graph=graph):
        if isinstance(event, ErrorEvent):
            raise ServiceError(500, event.code, event.message)
        if isinstance(event, FinalEvent):
            return AskResult.from_final(event)
    raise ServiceError(500, "no_result", "the answer graph ended without a result")
