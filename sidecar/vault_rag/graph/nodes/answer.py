"""Answer each aspect from its own evidence (fanned out with `Send`), then synthesize one
answer. The node whose text is the final answer streams it as `delta` events. An aspect whose
answer fails is left out of the synthesis with a note (`nodes/tasks.py`)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Send
from typing_extensions import TypedDict  # pydantic on Python 3.11 needs this one

from vault_rag.graph.config import Configuration, Resources, get_resources
from vault_rag.graph.events import DeltaEvent, ProgressEvent
from vault_rag.graph.extractive import extractive_answer
from vault_rag.graph.llm import ChatProvider, LLMUnavailable
from vault_rag.graph.nodes.common import emit, failure_update, progress, usable_model
from vault_rag.graph.nodes.grade import rank_candidates
from vault_rag.graph.nodes.retrieve import docs_for_aspect
from vault_rag.graph.nodes.tasks import after_answers, task_failed
from vault_rag.graph.prompts.answer import (
    ANSWER_CONTEXT,
    ANSWER_SYSTEM,
    MODEL_FAILED_LEAD,
    NOT_IN_NOTES,
    SYNTHESIZE_CONTEXT,
    SYNTHESIZE_SYSTEM,
    WEB_CLAUSE,
)
from vault_rag.graph.sources import format_evidence
from vault_rag.graph.state import Aspect, AspectAnswer, Doc, State


class AnswerTask(TypedDict):
    """The payload of one aspect's answer task."""

    aspect: Aspect
    docs: list[Doc]
    final: bool  # this aspect's answer is the whole answer: stream it
    degraded: str


def fan_out_answers(state: State) -> list[Send]:
    """One answer task per aspect, each with only that aspect's evidence."""
    final = len(state.aspects) == 1
    return [
        Send(
            "answer_aspect",
            AnswerTask(
                aspect=aspect,
                docs=docs_for_aspect(state.evidence, aspect["index"]),
                final=final,
                degraded=state.degraded,
            ),
        )
        for aspect in state.aspects
    ]


def _delta(text: str) -> None:
    emit(DeltaEvent(text=text))


def _fallback_lead(has_model: bool, reason: str) -> str:
    # With no model configured the notice is a note (`finish`), not part of the answer: chat
    # clients show `messages`, and every answer starting with it buries the quotes.
    return MODEL_FAILED_LEAD.format(reason=reason) if has_model else ""


async def _write(
    model: ChatProvider, messages: list[BaseMessage], stream: bool, node: str, resources: Resources
) -> tuple[str, dict[str, Any]]:
    """The model's text (streamed as deltas when `stream`), or "" plus the state update that
    explains why not. Streamed text that is then abandoned is retracted with a reset event."""
    streamed = False

    def on_delta(piece: str) -> None:
        nonlocal streamed
        streamed = True
        _delta(piece)

    try:
        text, usage = await model.text(messages, on_delta if stream else None)
    except LLMUnavailable as exc:
        text, update = "", failure_update(node, exc, resources)
    else:
        update = {"usage": usage}
        if not text.strip():
            text, update["notes"] = "", [f"The model returned an empty {node}."]
    if streamed and not text:
        emit(ProgressEvent(node="answer", reset=True))  # drop the streamed text
    return text, update


async def answer_aspect(task: AnswerTask, config: RunnableConfig) -> dict[str, Any]:
    """One aspect's answer: the model's, or the extractive one; a failure is recorded."""
    try:
        return await _answer_aspect(task, config)
    except Exception as exc:
        if task["final"]:  # it streams the answer: the client drops what it showed
            emit(ProgressEvent(node="answer", reset=True))
        return task_failed("answer_aspect", exc, task["aspect"]["index"])


async def _answer_aspect(task: AnswerTask, config: RunnableConfig) -> dict[str, Any]:
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    aspect, final = task["aspect"], task["final"]
    # Hits kept against the grader (strong retrieval evidence) first, then by grade.
    docs = sorted(
        rank_candidates(task["docs"]), key=lambda d: (not d.get("kept"), -(d.get("grade") or 0.0))
    )
    model = usable_model(resources, task["degraded"])
    update: dict[str, Any] = {}
    text = ""
    if not docs:
        text = NOT_IN_NOTES.format(question=aspect["question"])
        if final:
            _delta(text)
    elif model is not None:
        has_web = any(d.get("kind") == "web" for d in docs)
        system = ANSWER_SYSTEM.format(
            domain=configuration.domain, web_clause=WEB_CLAUSE if has_web else ""
        )
        context = ANSWER_CONTEXT.format(question=aspect["question"], passages=format_evidence(docs))
        text, update = await _write(
            model, [SystemMessage(system), HumanMessage(context)], final, "answer", resources
        )
    quoted: list[str] = []
    if not text:
        reason = update.get("degraded") or task["degraded"] or "it returned an empty answer"
        lead = _fallback_lead(resources.llm is not None, reason) if final else ""
        text, quoted = extractive_answer(aspect["question"], docs, lead=lead)
        if final:
            _delta(text)
    progress("answer_aspect", aspect=aspect["index"], docs=len(docs), chars=len(text))
    answer = AspectAnswer(
        aspect=aspect["index"],
        question=aspect["question"],
        text=text,
        doc_ids=[d["id"] for d in docs],
        quoted_ids=quoted,
    )
    return {"aspect_answers": [answer], **update}


async def synthesize(state: State, config: RunnableConfig) -> dict[str, Any]:
    """Join the aspect answers into one, without new facts. One aspect: nothing to do. The
    aspects whose answer failed are left out, with a note; none left is an error."""
    answers = state.aspect_answers
    notes = after_answers(answers, state.aspects, state.failures)
    if len(answers) == 1:
        progress("synthesize", skipped=True)
        if len(state.aspects) > 1:  # the others failed: this answer was not streamed yet
            _delta(answers[0]["text"])
        return {"answer": answers[0]["text"], **({"notes": notes} if notes else {})}
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    model = usable_model(resources, state.degraded)
    update: dict[str, Any] = {"notes": notes} if notes else {}
    if model is not None:
        parts = "\n\n".join(f"({a['aspect'] + 1}) {a['question']}\n{a['text']}" for a in answers)
        system = SYNTHESIZE_SYSTEM.format(domain=configuration.domain)
        context = SYNTHESIZE_CONTEXT.format(question=state.standalone_question, parts=parts)
        text, written = await _write(
            model, [SystemMessage(system), HumanMessage(context)], True, "synthesis", resources
        )
        update = {**written, "notes": [*notes, *written.get("notes", [])]} if notes else written
        if text:
            progress("synthesize", skipped=False, chars=len(text))
            return {"answer": text, **update}
    # Deterministic join: each aspect's answer under its question, in plan order.
    text = "\n\n".join(f"**{a['question']}**\n\n{a['text']}" for a in answers)
    _delta(text)
    progress("synthesize", skipped=False, chars=len(text), joined=True)
    return {"answer": text, **update}
