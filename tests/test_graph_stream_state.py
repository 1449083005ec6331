"""What a client streaming the graph sees (`stream_mode="updates"`, as LangGraph Studio shows a
run): every field a node writes has the state's own type — no private "clear" markers and no
LangGraph `Overwrite` wrappers, which reach JSON clients as `{"value": …, "type":
"__overwrite__"}` — and a thread's second turn starts with none of the first turn's notes,
usage or documents. Through the real compiled graph on the sample-vault index, with no model
and with a scripted model on the wire-level fake."""

from __future__ import annotations

import asyncio
import json
import typing
from typing import Any

import pytest
from langchain_core.load import dumpd
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import TypeAdapter

from test_graph_helpers import ScriptedModel, chat_provider, resources, shared_index
from vault_rag.graph.config import Resources
from vault_rag.graph.graph import build_graph
from vault_rag.graph.run import run_config
from vault_rag.graph.state import State

from fakes.openai_server import FakeOpenAIServer

FIRST = "How do I replicate a property to clients?"
SECOND = "BeginPlay 和构造函数有什么区别？"
# Conversation fields are LangChain messages (checked by add_messages itself).
UNCHECKED = {"messages"}
FIELD_TYPES = {
    name: TypeAdapter(hint)
    for name, hint in typing.get_type_hints(State).items()
    if name not in UNCHECKED
}


@pytest.fixture(scope="module")
def index():
    return shared_index()


async def _turn(graph: Any, res: Resources, thread: str, text: str) -> list[dict[str, Any]]:
    config = run_config(res, res.defaults, thread)
    inputs = {"messages": [{"type": "human", "content": text}]}
    return [u async for u in graph.astream(inputs, config, stream_mode="updates")]


def _writes(updates: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """(node, field, value) for every field every node wrote."""
    found = []
    for update in updates:
        for node, values in update.items():
            for value in values if isinstance(values, list) else [values]:
                for name, written in (value or {}).items():
                    found.append((node, name, written))
    return found


def _check_types(updates: list[dict[str, Any]]) -> None:
    for _node, name, value in _writes(updates):
        if name in FIELD_TYPES:
            # strict: an `Overwrite(value=[])` is no list, a {"value", "type"} dict no Usage
            FIELD_TYPES[name].validate_python(value, strict=True)
    # and as a JSON client gets it: no LangGraph wrapper in the serialised form either
    text = json.dumps(dumpd(updates), default=str)
    assert "__overwrite__" not in text and '"clear"' not in text, text[:2000]


@pytest.mark.parametrize("with_model", [False, True])
def test_streamed_updates_are_well_typed_and_a_turn_starts_empty(index, with_model):
    with FakeOpenAIServer() as server:
        server.default_chat_reply = ScriptedModel()
        res = resources(chat_provider(server.base_url) if with_model else None)
        graph = build_graph(InMemorySaver())

        async def both() -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
            first = await _turn(graph, res, "t", FIRST)
            second = await _turn(graph, res, "t", SECOND)
            config = run_config(res, res.defaults, "t")
            return first, second, await graph.aget_state(config)

        first, second, state = asyncio.run(both())
    for updates in (first, second):
        _check_types(updates)
        starts = updates[0]["take_question"]
        assert starts["notes"] == [] and starts["documents"] == [] and starts["failures"] == []
        assert starts["usage"]["llm_calls"] == 0 and starts["degraded"] == ""
    # Only the first node writes an empty accumulator: an empty write anywhere else would
    # wipe what the turn's parallel tasks gathered.
    accumulators = {"documents", "aspect_answers", "failures", "degraded", "notes", "usage"}
    for node, name, value in _writes(first + second):
        if name in accumulators and node != "take_question":
            assert value not in ([], "") and (name != "usage" or any(value.values())), (node, name)
    values = state.values
    assert [m.type for m in values["messages"]] == ["human", "ai", "human", "ai"]
    # What the thread holds after the second turn is what that turn wrote, nothing older.
    later = [(name, value) for node, name, value in _writes(second) if node != "take_question"]
    notes = list(dict.fromkeys(n for name, value in later if name == "notes" for n in value))
    assert values["notes"] == notes and (bool(notes) or with_model)  # no model: its notice
    calls = sum(value["llm_calls"] for name, value in later if name == "usage")
    assert values["usage"]["llm_calls"] == calls and (calls > 0) == with_model
    found = {d["id"] for name, value in later if name == "documents" for d in value}
    assert values["documents"] and {d["id"] for d in values["documents"]} == found
