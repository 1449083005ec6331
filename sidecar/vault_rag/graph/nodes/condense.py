"""Condense the conversation: a running summary and a standalone version of the question."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from vault_rag.graph.config import Configuration, get_resources
from vault_rag.graph.llm import LLMUnavailable, StructuredOutputError, bounds
from vault_rag.graph.nodes.common import failure_update, progress, usable_model
from vault_rag.graph.nodes.intent import format_history, prior_messages
from vault_rag.graph.prompts.condense import CONDENSE_CONTEXT, CONDENSE_SYSTEM
from vault_rag.graph.state import State


class Condensed(BaseModel):
    """The latest question made self-contained, and the updated conversation summary."""

    standalone_question: str = Field(
        description="the question, understandable on its own", json_schema_extra=bounds(chars=400)
    )
    summary: str = Field(
        default="",
        description="the conversation so far, at most 5 sentences",
        json_schema_extra=bounds(chars=800),
    )


async def condense(state: State, config: RunnableConfig) -> dict[str, Any]:
    """Rewrite the question so it stands alone. The first question of a thread has nothing to
    resolve, so it costs no model call; neither does a run without a model."""
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    history = prior_messages(state)
    model = usable_model(resources, state.degraded)
    if model is None or (not history and not state.summary):
        progress("condense", rewritten=False)
        return {"standalone_question": state.user_question}
    messages = [
        SystemMessage(CONDENSE_SYSTEM.format(domain=configuration.domain)),
        HumanMessage(
            CONDENSE_CONTEXT.format(
                summary=state.summary or "(none)",
                history=format_history(history, configuration.history_messages),
                question=state.user_question,
            )
        ),
    ]
    try:
        condensed, usage = await model.structured(Condensed, messages)
    except (LLMUnavailable, StructuredOutputError) as exc:
        progress("condense", rewritten=False, error=str(exc))
        return {
            "standalone_question": state.user_question,
            **failure_update("condense", exc, resources),
        }
    standalone = condensed.standalone_question.strip() or state.user_question
    progress("condense", rewritten=standalone != state.user_question)
    return {
        "standalone_question": standalone,
        "summary": condensed.summary.strip() or state.summary,
        "usage": usage,
    }
