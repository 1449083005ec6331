"""Take the question: from the plain `question` input, or the last human chat message."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from vault_rag.graph.nodes.common import progress
from vault_rag.graph.state import CLEAR, State
from vault_rag.graph.usage import RESET


async def take_question(state: State) -> dict[str, Any]:
    """Start a turn: pick the question and clear everything the previous turn left behind
    (documents, answers, notes, usage), keeping only the conversation and its summary."""
    last = state.messages[-1] if state.messages else None
    # A plain `question` wins; otherwise a chat client has just appended the human message.
    from_messages = not state.question.strip() and isinstance(last, HumanMessage)
    question = (last.text if from_messages and last is not None else state.question).strip()
    progress("take_question", chars=len(question))
    return {
        "question": "",  # consumed: a stale value must not answer the next turn
        "user_question": question,
        "from_messages": from_messages,
        "intent": None,
        "reply": "",
        "standalone_question": question,
        "aspects": [],
        "documents": CLEAR,
        "web_searched": False,
        "web_aspects": [],
        "evidence": [],
        "aspect_answers": CLEAR,
        "answer": "",
        "citations": [],
        "answer_id": "",
        "degraded": CLEAR,
        "notes": CLEAR,
        "usage": RESET,
    }
