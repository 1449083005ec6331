"""Classify the intent of the question, and the two replies that end a turn early."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from vault_rag.graph.config import Configuration, get_resources
from vault_rag.graph.llm import LLMUnavailable, StructuredOutputError, bounds
from vault_rag.graph.nodes.common import failure_update, progress, usable_model
from vault_rag.graph.prompts.intent import (
    INTENT_CONTEXT,
    INTENT_SYSTEM,
    OFF_TOPIC_REPLY,
    UNSAFE_REPLY,
)
from vault_rag.graph.state import Intent, State

INTENTS = ("on_topic", "chitchat", "off_topic", "unsafe")


class IntentDecision(BaseModel):
    """How to handle the user's last message."""

    intent: Literal["on_topic", "chitchat", "off_topic", "unsafe"] = Field(
        description="on_topic, chitchat, off_topic or unsafe"
    )
    reply: str = Field(
        default="",
        description="one friendly sentence, for chitchat only",
        json_schema_extra=bounds(chars=200),
    )

    @field_validator("intent", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> str:
        # Small models write "On-topic", "ON TOPIC"...; anything unknown is treated as on-topic.
        text = str(value or "").strip().lower().replace("-", "_").replace(" ", "_")
        return text if text in INTENTS else "on_topic"


def format_history(messages: list[AnyMessage], limit: int) -> str:
    lines = []
    for message in messages[-limit:] if limit else []:
        who = "User" if isinstance(message, HumanMessage) else "Assistant"
        lines.append(f"{who}: {message.text[:600]}")
    return "\n".join(lines) or "(none)"


def prior_messages(state: State) -> list[AnyMessage]:
    """The conversation before this turn's question."""
    return state.messages[:-1] if state.from_messages else state.messages


async def classify_intent(state: State, config: RunnableConfig) -> dict[str, Any]:
    """on_topic / chitchat / off_topic / unsafe, in one structured call. Without a model every
    question is on-topic."""
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    model = usable_model(resources, state.degraded)
    if model is None:
        progress("classify_intent", intent="on_topic", model=False)
        return {"intent": "on_topic"}
    messages = [
        SystemMessage(INTENT_SYSTEM.format(domain=configuration.domain)),
        HumanMessage(
            INTENT_CONTEXT.format(
                summary=state.summary or "(none)",
                history=format_history(prior_messages(state), configuration.history_messages),
                question=state.user_question,
            )
        ),
    ]
    try:
        decision, usage = await model.structured(IntentDecision, messages)
    except (LLMUnavailable, StructuredOutputError) as exc:
        progress("classify_intent", intent="on_topic", error=str(exc))
        return {"intent": "on_topic", **failure_update("classify_intent", exc, resources)}
    progress("classify_intent", intent=decision.intent)
    return {"intent": decision.intent, "reply": decision.reply.strip(), "usage": usage}


def route_by_intent(state: State) -> Literal["condense", "small_talk", "decline"]:
    intent: Intent = state.intent or "on_topic"
    if intent == "chitchat":
        return "small_talk"
    if intent in ("off_topic", "unsafe"):
        return "decline"
    return "condense"


async def small_talk(state: State, config: RunnableConfig) -> dict[str, Any]:
    """Answer a greeting with the classifier's own one-line reply; it joins the conversation."""
    configuration = Configuration.from_runnable_config(config)
    reply = state.reply or f"Hello! Ask me anything about {configuration.domain}."
    answer_id = uuid.uuid4().hex
    progress("small_talk", answer_id=answer_id)
    new: list[AnyMessage] = [] if state.from_messages else [HumanMessage(state.user_question)]
    message = AIMessage(reply, id=answer_id)
    return {"answer": reply, "answer_id": answer_id, "messages": [*new, message]}


async def decline(state: State, config: RunnableConfig) -> dict[str, Any]:
    """A short polite refusal. Neither the question nor the refusal is kept in the
    conversation, so an injection attempt never reaches a later prompt."""
    configuration = Configuration.from_runnable_config(config)
    template = UNSAFE_REPLY if state.intent == "unsafe" else OFF_TOPIC_REPLY
    reply = template.format(domain=configuration.domain)
    progress("decline", intent=state.intent)
    removed: list[AnyMessage] = []
    if state.from_messages and state.messages and state.messages[-1].id:
        removed = [RemoveMessage(id=state.messages[-1].id)]
    return {"answer": reply, "messages": removed}
