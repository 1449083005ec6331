"""When a step fails: a chat turn still gets a reply.

The graph's error handler (`StateGraph.set_node_defaults(error_handler=...)`) runs instead of
the step that raised. In a chat turn (`messages` input: LangGraph Studio, agent-chat-ui) the
human message is already in the thread, so the turn ends with an AI message saying what
failed, instead of a question left without a reply. A plain `question` (the CLI and the HTTP
server, through `run.py`) re-raises: those callers report the error themselves and keep the
thread untouched.

Parallel tasks (`Send`: a vault or web query, one aspect's answer) do not reach this handler
with their failures: they record them and the turn goes on without them (`nodes/tasks.py`);
when nothing is left, the joining step raises `TurnFailed`, which this handler turns into the
error reply. The handler of a `Send` task gets that task's payload, not the state, so should
one raise all the same it cannot tell a chat turn from a question and re-raises.
"""

from __future__ import annotations

import hashlib
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.errors import NodeError
from langgraph.graph import END
from langgraph.types import Command

from vault_rag.graph.state import State


async def reply_with_error(state: Any, error: NodeError) -> Command:
    if not isinstance(state, State) or not state.from_messages:
        raise error.error
    text = (
        f"Sorry, this question could not be answered: the {error.node} step failed "
        f"({type(error.error).__name__}: {error.error})."
    )
    # One reply per turn even when parallel steps fail together: the same id replaces it.
    turn = state.messages[-1].id if state.messages else None
    key = hashlib.md5(f"{turn}:{state.user_question}".encode()).hexdigest()
    return Command(
        update={"messages": [AIMessage(text, id=f"error-{key}")], "notes": [text]},
        goto=END,
    )
