"""A failed parallel task (`Send`: one vault search, one aspect's answer) does not take the whole
turn down: the answer is made from what is left, with a note, and a chat turn whose every
search failed ends with an error reply in `messages` instead of no reply.

The failures come from the wire: the sample vault indexed with remote embeddings on the fake
OpenAI server (which fails the embedding requests a test picks), and a chat model on the same
server whose answer stream breaks off mid-reply. `nodes/tasks.py`'s decisions are also checked
on their own, for the cases the wire cannot reach without a bug to trigger them.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from test_graph_helpers import ScriptedModel, chat_provider, collect
from vault_rag.embeddings.openai_provider import OpenAICompatibleProvider
from vault_rag.graph.config import Configuration, Resources
from vault_rag.graph.graph import build_graph
from vault_rag.graph.nodes.answer import answer_aspect, synthesize
from vault_rag.graph.nodes.tasks import TurnFailed, after_answers, after_retrieval
from vault_rag.graph.run import run_config
from vault_rag.graph.state import State
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.serving.sample import sample_vault_path

from fakes.openai_server import ChatReply, ErrorReply, FakeOpenAIServer

QUESTION = "BeginPlay 和构造函数有什么区别？构造函数里能访问 GetWorld 吗？"
MARK = "FAILING-QUERY"  # the embedding server fails every input containing it


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def remote_index(server: FakeOpenAIServer) -> Iterator[VaultIndex]:
    """The sample vault with remote embeddings (the fake's hash vectors): BM25 does the real
    ranking, every query embedding is an HTTP request the test can make fail."""
    data_dir = Path(tempfile.mkdtemp(prefix="vault-rag-remote-"))
    provider = OpenAICompatibleProvider("fake-embedding", base_url=server.base_url, max_retries=0)
    index = VaultIndex(sample_vault_path(), data_dir, provider)
    Indexer(index).run()
    yield index
    index.close()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def model(server: FakeOpenAIServer) -> Iterator[ScriptedModel]:
    scripted = ScriptedModel()
    server.default_chat_reply = scripted
    server.embedding_error = None
    yield scripted
    server.embedding_error = None


def plan_with(queries: list[str]) -> Any:
    """A plan reply: the question as its one aspect, searched with these extra queries."""

    def reply(body: dict[str, Any]) -> ChatReply:
        aspect = {"question": QUESTION, "terms": [], "vault_queries": queries}
        return ScriptedModel._structured(body, {"aspects": [aspect]})

    return reply


def fail_inputs(predicate: Any) -> Any:
    def check(inputs: list[Any]) -> ErrorReply | None:
        if any(predicate(str(item)) for item in inputs):
            return ErrorReply(500, "embedding backend crashed")
        return None

    return check


def remote_resources(index: VaultIndex, server: FakeOpenAIServer | None) -> Resources:
    llm = chat_provider(server.base_url) if server is not None else None
    return Resources(index=index, llm=llm, defaults=Configuration())


def chat_turn(res: Resources, text: str) -> dict[str, Any]:
    graph = build_graph(InMemorySaver())
    config = run_config(res, res.defaults, "t")
    return asyncio.run(graph.ainvoke({"messages": [{"type": "human", "content": text}]}, config))


def test_one_failed_vault_search_leaves_the_others_to_answer(remote_index, server, model):
    model.overrides["plan"] = plan_with([f"{MARK} constructor", "GetWorld BeginPlay"])
    server.embedding_error = fail_inputs(lambda text: MARK in text)
    res = remote_resources(remote_index, server)
    run = collect(QUESTION, res)
    assert not run.errors, run.errors
    final = run.final
    assert final["citations"] and final["answer"].startswith("Scripted answer")
    assert any("1 of 3 searches of your notes failed" in n for n in final["notes"]), final["notes"]
    failed = [p for p in run.progress("retrieve_vault") if p.get("failed")]
    assert [p["query"] for p in failed] == [f"{MARK} constructor"]
    assert "embedding backend crashed" in failed[0]["error"]
    # A chat client gets the same answer appended to the conversation.
    values = chat_turn(res, QUESTION)
    assert [m.type for m in values["messages"]] == ["human", "ai"] and values["citations"]


def test_every_search_failing_ends_a_chat_turn_with_an_error_reply(remote_index, server, model):
    """The embedding server goes down once the question was checked against the notes: the
    model's aspects cannot be checked (the question alone is searched) and every search fails."""
    down = {"now": False}

    def plan(body: dict[str, Any]) -> ChatReply:
        down["now"] = True
        return plan_with([])(body)

    model.overrides["plan"] = plan
    server.embedding_error = fail_inputs(lambda _text: down["now"])
    res = remote_resources(remote_index, server)
    values = chat_turn(res, QUESTION)
    reply = values["messages"][-1]
    assert [m.type for m in values["messages"]] == ["human", "ai"] and isinstance(reply, AIMessage)
    assert (
        "could not be answered" in reply.text and "every search of your notes failed" in reply.text
    )
    # The CLI and the HTTP server get an error event (and keep the thread untouched).
    down["now"] = False
    run = collect(QUESTION, res)
    assert run.errors and "every search of your notes failed" in run.errors[0]["message"]
    assert not [e for e in run.events if e.event == "final"]


def test_a_garbled_answer_stream_falls_back_to_the_extractive_answer(remote_index, server, model):
    broken = ChatReply(content="BeginPlay runs after the constructor.", garbled_after=2)
    model.overrides["answer"] = broken
    run = collect(QUESTION, remote_resources(remote_index, server))
    assert not run.errors, run.errors
    final = run.final
    assert any("unreadable reply" in n for n in final["notes"]), final["notes"]
    assert "could not be used" in final["answer"] and final["citations"]
    resets = [p for p in run.progress("answer") if p.get("reset")]
    assert resets  # the two streamed pieces were retracted before the quotes


# -- what the joins decide (nodes/tasks.py) --------------------------------------------------
def aspect(index: int, queries: int) -> dict[str, Any]:
    return {
        "index": index,
        "question": f"part {index}",
        "terms": [],
        "vault_queries": [f"q{index}.{i}" for i in range(queries)],
        "web_queries": [],
        "hyde": "",
    }


def failure(node: str, index: int, query: str = "") -> dict[str, Any]:
    return {"node": node, "aspect": index, "query": query, "error": "EmbeddingError: down"}


def test_an_aspect_whose_every_search_failed_is_left_out():
    aspects = [aspect(0, 2), aspect(1, 2)]
    docs = [{"id": "a", "kind": "vault", "aspects": [0], "text": "x"}]
    failures = [failure("retrieve_vault", 1, "q1.0"), failure("retrieve_vault", 1, "q1.1")]
    kept, notes = after_retrieval(aspects, docs, failures)  # type: ignore[arg-type]
    assert [a["index"] for a in kept] == [0]
    assert notes == [
        "Searching your notes failed for “part 1” (EmbeddingError: down); that part of the "
        "question is left out."
    ]
    # Found something all the same (another aspect's query reached it): kept, with a note.
    docs.append({"id": "b", "kind": "vault", "aspects": [1], "text": "y"})
    kept, notes = after_retrieval(aspects, docs, failures)  # type: ignore[arg-type]
    assert len(kept) == 2 and "2 of 2 searches of your notes failed" in notes[0]
    # Nothing left at all.
    with pytest.raises(TurnFailed, match="every search of your notes failed"):
        after_retrieval([aspect(1, 2)], [], failures)  # type: ignore[arg-type]
    # A failed web search only costs a note.
    kept, notes = after_retrieval(aspects, docs, [failure("web_search", 0, "w")])  # type: ignore[arg-type]
    assert len(kept) == 2 and notes[0].startswith("The web search “w” failed")


def test_an_aspect_whose_answer_failed_is_left_out_of_the_synthesis(remote_index):
    # A broken task (its evidence has no text: a bug upstream) records its failure...
    task = {"aspect": aspect(1, 1), "docs": [{"id": "d", "kind": "vault"}], "final": False}
    res = remote_resources(remote_index, None)
    config: RunnableConfig = run_config(res, res.defaults, None)
    update = asyncio.run(answer_aspect({**task, "degraded": ""}, config))  # type: ignore[arg-type]
    assert list(update) == ["failures"] and update["failures"][0]["aspect"] == 1
    # ...and the synthesis answers from the rest, saying so.
    good = {"aspect": 0, "question": "part 0", "text": "Zero [[N]].", "doc_ids": []}
    state = State(
        aspects=[aspect(0, 1), aspect(1, 1)],  # type: ignore[list-item]
        aspect_answers=[{**good, "quoted_ids": []}],  # type: ignore[list-item]
        failures=update["failures"],
    )
    result = asyncio.run(synthesize(state, config))
    assert result["answer"] == "Zero [[N]]."
    assert result["notes"][0].startswith("The answer to “part 1” failed (KeyError")
    with pytest.raises(TurnFailed, match="writing the answer failed"):
        after_answers([], [aspect(1, 1)], update["failures"])  # type: ignore[arg-type]
