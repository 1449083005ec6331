"""Take the question: from the plain `question` input, or the last human chat message."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from vault_rag.graph.config import get_resources
from vault_rag.graph.focus import resolve_focus
from vault_rag.graph.nodes.common import progress
from vault_rag.graph.state import State
from vault_rag.graph.usage import zero_usage


async def take_question(state: State, config: RunnableConfig) -> dict[str, Any]:
    """Start a turn: pick the question (and the note it is asked about, `focus`) and clear
    everything the previous turn left behind (documents, answers, failures, notes, usage),
    keeping only the conversation and its summary. The fields with reducers get their empty
    value, which their reducer takes as "start over" (`state.py`): what a client streams is of
    each field's own type, with no private markers and no LangGraph `Overwrite` wrappers."""
    last = state.messages[-1] if state.messages else None
    # A plain `question` wins; otherwise a chat client has just appended the human message.
    from_messages = not state.question.strip() and isinstance(last, HumanMessage)
    question = (last.text if from_messages and last is not None else state.question).strip()
    progress("take_question", chars=len(question))
    focus = resolve_focus(state.note, get_resources(config)) if state.note else None
    if focus is not None:
        progress(
            "focus",
            note=focus["path"],
            indexed=focus["indexed"],
            linked=len(focus["linked"]),
            selection=bool(focus["selection"]),
        )
    return {
        "question": "",  # consumed: a stale value must not answer the next turn
        "note": None,  # consumed too: the next turn is about a note only when it says so
        "focus": focus,
        "user_question": question,
        "from_messages": from_messages,
        "intent": None,
        "reply": "",
        "standalone_question": question,
        "aspects": [],
        "documents": [],
        "web_searched": False,
        "web_aspects": [],
        "evidence": [],
        "failures": [],
        "aspect_answers": [],
        "answer": "",
        "citations": [],
        "answer_id": "",
        "degraded": "",
        "notes": [],
        "usage": zero_usage(),
    }
