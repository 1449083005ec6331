"""Finish the turn: collect the citations, give the answer an id, record it for feedback and
append it to the conversation."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from vault_rag.feedback.answers import record_answer
from vault_rag.graph.config import get_resources
from vault_rag.graph.events import DeltaEvent
from vault_rag.graph.extractive import NO_MODEL_NOTE
from vault_rag.graph.nodes.common import emit, progress
from vault_rag.graph.safe_markdown import neutralize
from vault_rag.graph.sources import collect_citations
from vault_rag.graph.state import State


async def record_shown(
    state: State,
    config: RunnableConfig,
    answer: str,
    *,
    citations: Iterable[Mapping[str, Any]] = (),
    model: str | None = None,
) -> str:
    """Give an answer the user sees its id and record it, so it can be rated (👍/👎,
    `vault-rag feedback`) and promoted to a note: every node that ends a turn with an answer id
    (this one, small talk, the "not covered" decline) records through here. Recorded whatever
    runs the graph (CLI, server, `langgraph dev`); returns the id."""
    answer_id = uuid.uuid4().hex
    await asyncio.to_thread(
        record_answer,
        get_resources(config).index.data_dir,
        answer_id=answer_id,
        question=state.user_question,
        answer=neutralize(answer),
        citations=citations,
        model=model,
        thread_id=(config.get("configurable") or {}).get("thread_id"),
    )
    return answer_id


async def finish(state: State, config: RunnableConfig) -> dict[str, Any]:
    resources = get_resources(config)
    answer = state.answer.strip()
    by_id = {d["id"]: d for d in state.evidence}
    # Extractive answers know exactly what they quoted; model-written ones are read for their
    # [[note#heading]] and URL citations, among the evidence they were given.
    quoted = [by_id[i] for a in state.aspect_answers for i in a.get("quoted_ids", []) if i in by_id]
    written = {i for a in state.aspect_answers if not a.get("quoted_ids") for i in a["doc_ids"]}
    docs = [d for d in state.evidence if d["id"] in written]
    citations, really_cited = collect_citations(answer, docs, quoted)
    notes: list[str] = []
    if docs and not really_cited:
        # Small models often forget to cite: list what they were given, so the answer can
        # still be checked against the notes.
        footer = "\n\nSources: " + ", ".join(dict.fromkeys(d["cite"] for d in docs))
        emit(DeltaEvent(text=footer))
        answer += footer
        notes.append("The answer cites no source itself; the sources it was given are listed.")
    if resources.llm is None:
        notes.append(NO_MODEL_NOTE)
    model = resources.llm.label if resources.llm is not None else "extractive"
    answer_id = await record_shown(state, config, answer, citations=citations, model=model)
    new: list[AnyMessage] = [] if state.from_messages else [HumanMessage(state.user_question)]
    progress("finish", citations=len(citations), answer_id=answer_id)
    update: dict[str, Any] = {
        "answer": answer,
        "citations": citations,
        "answer_id": answer_id,
        "messages": [*new, AIMessage(answer, id=answer_id)],
    }
    if notes:  # an empty write would empty the turn's notes (`state.py`)
        update["notes"] = notes
    return update
