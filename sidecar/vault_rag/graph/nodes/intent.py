"""Classify the intent of the question, and the two replies that end a turn early."""

from __future__ import annotations

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
from vault_rag.graph.evidence import Evidence, question_evidence
from vault_rag.graph.focus import search_focus
from vault_rag.graph.llm import LLMUnavailable, StructuredOutputError, bounds
from vault_rag.graph.nodes.common import failure_update, progress, usable_model
from vault_rag.graph.nodes.finish import record_shown
from vault_rag.graph.nodes.retrieve import web_available
from vault_rag.graph.prompts.intent import (
    INTENT_CONTEXT,
    INTENT_SYSTEM,
    NOT_COVERED_EMPTY,
    NOT_COVERED_REPLY,
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


def not_covered(evidence: Evidence) -> dict[str, Any]:
    """Decline a question the vault does not cover, naming the closest notes."""
    notes = evidence.closest_notes()
    reply = NOT_COVERED_REPLY.format(notes=", ".join(notes)) if notes else NOT_COVERED_EMPTY
    return {"intent": "off_topic", "reply": reply}


async def classify_intent(state: State, config: RunnableConfig) -> dict[str, Any]:
    """on_topic / chitchat / off_topic / unsafe, in one structured call, checked against the
    vault: a question whose evidence is weak (cosine and BM25 both) is told the notes do not
    cover it, and a chitchat or off-topic verdict is overruled when the evidence is strong.
    Without a model every question with some evidence is on-topic."""
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    model = usable_model(resources, state.degraded)
    focus = search_focus(state.focus, resources)
    evidence = await question_evidence(state.user_question, configuration, resources, focus)
    scores = {"evidence": evidence.strength, "dense": round(evidence.dense, 3)}
    scores |= {"lexical": round(evidence.lexical, 2), "lexical_scaled": evidence.lexical_scaled}
    if not evidence.same_script:
        scores["same_script"] = False
    # Weak vault evidence declines the question, unless the web may fill the gap (hybrid mode
    # with a search key): then the turn goes on and `check_evidence` searches the web. A
    # question about an indexed note ("what does this say?") is answered from that note.
    declines = (
        evidence.strength == "weak"
        and not web_available(configuration, resources)
        and focus is None
    )
    if model is None:
        if declines:
            progress("classify_intent", intent="off_topic", model=False, **scores)
            return not_covered(evidence)
        progress("classify_intent", intent="on_topic", model=False, **scores)
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
        progress("classify_intent", intent="on_topic", error=str(exc), **scores)
        failure = failure_update("classify_intent", exc, resources)
        if declines:
            return {**failure, **not_covered(evidence)}
        return {"intent": "on_topic", **failure}
    intent: Intent = decision.intent
    update: dict[str, Any] = {"usage": usage}
    if intent in ("chitchat", "off_topic") and evidence.strength == "strong":
        # The model may not take the vault away: strong matches win over its verdict.
        update["notes"] = [
            f"The model classed this as {intent}, but your notes match it strongly, so it "
            "was answered from them."
        ]
        progress("classify_intent", intent="on_topic", overruled=intent, **scores)
        return {"intent": "on_topic", **update}
    if intent == "on_topic" and declines:
        progress("classify_intent", intent="off_topic", overruled=intent, **scores)
        return {**update, **not_covered(evidence)}
    progress("classify_intent", intent=intent, **scores)
    reply = decision.reply.strip() if intent == "chitchat" else ""
    return {"intent": intent, "reply": reply, **update}


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
    # The pane offers 👍/👎 on it like on any answer: recorded, so the rating is not a 404.
    model = get_resources(config).llm
    label = model.label if state.reply and model is not None else None
    answer_id = await record_shown(state, config, reply, model=label)
    progress("small_talk", answer_id=answer_id)
    new: list[AnyMessage] = [] if state.from_messages else [HumanMessage(state.user_question)]
    message = AIMessage(reply, id=answer_id)
    return {"answer": reply, "answer_id": answer_id, "messages": [*new, message]}


async def decline(state: State, config: RunnableConfig) -> dict[str, Any]:
    """A short polite refusal. Neither the question nor the refusal is kept in the
    conversation, so an injection attempt never reaches a later prompt. A question the notes
    do not cover (`reply` set by the evidence check) is answered like any other: it joins the
    conversation with an answer id."""
    configuration = Configuration.from_runnable_config(config)
    if state.intent == "off_topic" and state.reply:
        answer_id = await record_shown(state, config, state.reply)
        progress("decline", intent=state.intent, covered=False, answer_id=answer_id)
        new: list[AnyMessage] = [] if state.from_messages else [HumanMessage(state.user_question)]
        message = AIMessage(state.reply, id=answer_id)
        return {"answer": state.reply, "answer_id": answer_id, "messages": [*new, message]}
    template = UNSAFE_REPLY if state.intent == "unsafe" else OFF_TOPIC_REPLY
    reply = template.format(domain=configuration.domain)
    progress("decline", intent=state.intent)
    removed: list[AnyMessage] = []
    if state.from_messages and state.messages and state.messages[-1].id:
        removed = [RemoveMessage(id=state.messages[-1].id)]
    return {"answer": reply, "messages": removed}
