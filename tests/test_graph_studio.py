"""What LangGraph Studio and agent-chat-ui meet besides a good answer: a failed chat turn still
gets a reply, and a graph without resources says so instead of building them on the loop."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import NodeError

from vault_rag.graph.config import ResourcesMissingError, get_resources, use_process_resources
from vault_rag.graph.graph import build_graph
from vault_rag.graph.nodes.failure import reply_with_error


@pytest.fixture(autouse=True)
def no_process_resources():
    use_process_resources(None)
    yield
    use_process_resources(None)


def test_a_node_without_resources_fails_clearly():
    with pytest.raises(ResourcesMissingError, match=r"langgraph\.json"):
        get_resources({"configurable": {}})


def test_a_failed_chat_turn_ends_with_an_error_reply():
    graph = build_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    async def turn(text: str) -> dict:
        return await graph.ainvoke({"messages": [{"type": "human", "content": text}]}, config)

    first = asyncio.run(turn("How do I replicate a property?"))
    reply = first["messages"][-1]
    assert isinstance(reply, AIMessage)
    assert "could not be answered" in reply.text and "ResourcesMissingError" in reply.text
    assert first["notes"] == [reply.text]
    second = asyncio.run(turn("And RPCs?"))  # the thread goes on: one reply per question
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    assert second["notes"] == [second["messages"][-1].text]


def test_a_failed_question_run_raises_for_its_caller():
    """`run.py` (CLI, HTTP server) reports the error itself and keeps the thread untouched."""
    graph = build_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ResourcesMissingError):
        asyncio.run(graph.ainvoke({"question": "How do I replicate a property?"}, config))
    assert asyncio.run(graph.aget_state(config)).values.get("messages", []) == []


def test_a_send_task_that_still_raises_fails_with_its_own_error():
    """Parallel tasks record their failures (`nodes/tasks.py`, `test_graph_task_failures.py`);
    should one raise all the same, its handler sees the task payload, not the state, and
    re-raises the error."""
    failure = NodeError(node="retrieve_vault", error=ValueError("the store is gone"))
    with pytest.raises(ValueError, match="the store is gone"):
        asyncio.run(reply_with_error({"aspect": 0, "query": "q"}, failure))
