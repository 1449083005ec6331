"""Pieces of the answer graph on their own: reducers, plan clamping, citations, the extractive
answer, near-duplicate merging, and the chat provider against the wire-level fake server
(JSON schema, function calling, repair re-asks, server down, timeout, streaming)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import START, StateGraph

from test_graph_helpers import chat_provider
from vault_rag.graph.config import Configuration
from vault_rag.graph.extractive import best_excerpt, extractive_answer
from vault_rag.graph.llm import LLMUnavailable, StructuredOutputError
from vault_rag.graph.nodes.dedup import merge_near_duplicates
from vault_rag.graph.nodes.grade import PassageScore, rank_candidates
from vault_rag.graph.nodes.intent import IntentDecision
from vault_rag.graph.nodes.plan import Plan, PlannedAspect, to_aspects
from vault_rag.graph.nodes.question import take_question
from vault_rag.graph.sources import cited_docs, collect_citations, vault_cite
from vault_rag.graph.state import (
    Doc,
    State,
    add_notes,
    first_reason,
    merge_aspect_answers,
    merge_documents,
)
from vault_rag.graph.usage import add_usage, zero_usage

from fakes.openai_server import ChatReply, FakeOpenAIServer, ToolCall, unused_base_url


def vdoc(doc_id: str, note: str, anchor: str, text: str = "text", **extra: object) -> Doc:
    doc = Doc(
        id=doc_id,
        kind="vault",
        aspects=[0],
        text=text,
        score=0.01,
        cite=vault_cite(note, anchor),
        note_path=note,
        heading=anchor,
        anchor=anchor,
        chunk_id=doc_id,
        origin=note,
        line_start=1,
        line_end=2,
        also=[],
    )
    doc.update(extra)  # type: ignore[typeddict-item]
    return doc


# -- reducers --------------------------------------------------------------------------------
def test_documents_reducer_merges_by_id():
    a = vdoc("a", "N.md", "H", score=0.2, aspects=[0])
    a2 = vdoc("a", "N.md", "H", score=0.5, aspects=[1])
    b = vdoc("b", "N.md", "H")
    merged = merge_documents(merge_documents([], [a]), [a2, b])
    assert [d["id"] for d in merged] == ["a", "b"]
    assert merged[0]["aspects"] == [0, 1] and merged[0]["score"] == 0.5


def test_other_reducers():
    assert add_usage(add_usage(None, {"llm_calls": 2}), {"llm_calls": 1, "prompt_tokens": 5}) == {
        **zero_usage(),
        "llm_calls": 3,
        "prompt_tokens": 5,
    }
    one = {"aspect": 1, "question": "b", "text": "B", "doc_ids": []}
    zero = {"aspect": 0, "question": "a", "text": "A", "doc_ids": []}
    assert [a["aspect"] for a in merge_aspect_answers([one], [zero])] == [0, 1]
    assert add_notes(["x"], ["y", "x"]) == ["x", "y"]
    assert first_reason("", "down") == "down" and first_reason("down", "other") == "down"
    # An empty write starts over (the first node of a turn); None leaves the value alone.
    assert add_notes(["x"], []) == [] and add_notes(["x"], None) == ["x"]
    assert merge_aspect_answers([one], []) == []
    assert merge_documents([vdoc("a", "N", "H")], []) == []
    assert first_reason("down", "") == ""
    assert add_usage({**zero_usage(), "llm_calls": 3}, zero_usage()) == zero_usage()


def test_a_turn_starts_with_empty_per_turn_state():
    """`take_question` empties the reducer fields through the real channels (an empty write
    starts each accumulator over), and its update is the plain empty values: no private marker
    and no LangGraph `Overwrite` a client would see."""
    builder = StateGraph(State)
    builder.add_node(take_question)
    builder.add_edge(START, "take_question")
    stale = {
        "question": "next question",
        "documents": [vdoc("a", "N.md", "H")],
        "aspect_answers": [{"aspect": 0, "question": "a", "text": "A", "doc_ids": []}],
        "degraded": "server down",
        "notes": ["an old note"],
        "usage": {**zero_usage(), "llm_calls": 3},
    }
    graph = builder.compile()

    async def run() -> tuple[list, dict]:
        updates = [u async for u in graph.astream(stale, stream_mode="updates")]
        return updates, await graph.ainvoke(stale)

    updates, after = asyncio.run(run())
    assert after["documents"] == [] and after["aspect_answers"] == [] and after["notes"] == []
    assert after["degraded"] == "" and after["usage"] == zero_usage()
    assert after["user_question"] == "next question"
    assert "clear" not in str(updates) and "reset" not in str(updates)
    written = updates[0]["take_question"]
    assert written["notes"] == [] and type(written["notes"]) is list
    assert written["usage"] == zero_usage() and written["degraded"] == ""
    assert "Overwrite" not in repr(updates)


# -- node helpers ----------------------------------------------------------------------------
def test_plan_is_clamped_and_searches_the_question_first():
    config = Configuration(web_mode="hybrid", max_aspects=2, vault_queries_per_aspect=3)
    plan = Plan(
        aspects=[
            PlannedAspect(question="A?", terms=["UObject", "GC"], vault_queries=["q1", "q2"]),
            PlannedAspect(question="", vault_queries=[], web_queries=["fact one", "fact two"]),
            PlannedAspect(question="C?"),
        ]
    )
    aspects = to_aspects(plan, "orig", config)
    assert len(aspects) == 2
    # The question always searches (outside the budget); the model's queries only add.
    assert aspects[0]["vault_queries"] == ["orig", "A?", "UObject GC", "q1"]
    assert aspects[1]["question"] == "orig" and aspects[1]["web_queries"] == [
        "fact one",
        "fact two",
    ]
    # The user's own wording searches too when the condensed question differs.
    condensed = to_aspects(plan, "orig (standalone)", config, asked_as=("orig",))
    assert condensed[0]["vault_queries"][:2] == ["orig (standalone)", "orig"]
    # An unrelated aspect falls back to the question; a repeated aspect collapses.
    fell = to_aspects(plan, "orig", config, related=[False, True])
    assert [a["question"] for a in fell] == ["orig"]
    assert fell[0]["vault_queries"] == ["orig"] and fell[0]["terms"] == []
    strict = to_aspects(None, "orig", Configuration())
    assert (
        len(strict) == 1 and strict[0]["vault_queries"] == ["orig"] and not strict[0]["web_queries"]
    )


def test_small_model_output_is_normalised():
    assert IntentDecision(intent="On-Topic").intent == "on_topic"
    assert IntentDecision(intent="banana").intent == "on_topic"
    assert IntentDecision(intent="OFF TOPIC").intent == "off_topic"
    assert [PassageScore(id=1, score=s).score for s in (8, 80, -1, "x", 0.4)] == [
        0.8,
        0.8,
        0.0,
        0.0,
        0.4,
    ]


def test_rank_candidates_interleaves_vault_and_web():
    docs = [
        vdoc("v1", "A.md", "x", score=0.01),
        vdoc("v2", "B.md", "x", score=0.03),
        Doc(id="w1", kind="web", score=0.9, url="https://a", cite="https://a", text="t"),
    ]
    assert [d["id"] for d in rank_candidates(docs)] == ["v2", "w1", "v1"]


def test_rank_candidates_keep_the_routed_order_across_collections():
    """Two collections' RRF scores do not compare: the routed merge placed the tree's
    function first (its weight), and sorting by score would put the note back on top."""
    docs = [
        vdoc("code1", "deflate.c", "", score=0.016, collection="zlib", rank=0),
        vdoc("code2", "trees.c", "", score=0.015, collection="zlib", rank=1),
        vdoc("note1", "A.md", "x", score=0.033, collection="vault", rank=2),
        Doc(id="w1", kind="web", score=0.9, url="https://a", cite="https://a", text="t"),
    ]
    assert [d["id"] for d in rank_candidates(docs)] == ["code1", "w1", "code2", "note1"]
    # one collection: its scores compare, as before
    alone = [vdoc("a", "A.md", "x", score=0.01, rank=0), vdoc("b", "B.md", "x", score=0.03, rank=1)]
    assert [d["id"] for d in rank_candidates(alone)] == ["b", "a"]


def test_documents_reducer_keeps_the_best_rank():
    first = vdoc("a", "N.md", "H", score=0.2, rank=4)
    again = vdoc("a", "N.md", "H", score=0.1, rank=1, aspects=[1])
    merged = merge_documents(merge_documents([], [first]), [again])
    assert merged[0]["rank"] == 1 and merged[0]["score"] == 0.2


# -- citations -------------------------------------------------------------------------------
def test_citations_match_full_path_short_name_and_urls():
    docs = [
        vdoc("c1", "Rendering/材质系统.md", "材质参数"),
        vdoc("c2", "C++/UObject 与 GC.md", "销毁与 GC"),
        Doc(
            id="w",
            kind="web",
            url="https://dev.epicgames.com/x",
            cite="https://dev.epicgames.com/x",
            title="X",
            text="t",
        ),
        vdoc("c3", "Tools/性能分析.md", "stat unit"),
    ]
    answer = (
        "Use a MID [[材质系统#材质参数]]. Web: https://dev.epicgames.com/x. "
        "GC [[C++/UObject 与 GC#销毁与 GC]]. Wrong heading [[性能分析#Other]]."
    )
    assert [d["id"] for d in cited_docs(answer, docs)] == ["c1", "w", "c2"]
    records, really = collect_citations(answer, docs)
    assert really and [r.get("chunk_id") or r.get("url") for r in records] == [
        "c1",
        "https://dev.epicgames.com/x",
        "c2",
    ]
    assert records[0]["note_path"] == "Rendering/材质系统.md" and records[1]["kind"] == "web"
    listed, really = collect_citations("no citations here", docs)
    assert not really and len(listed) == 4


def test_a_heading_with_hash_is_cited_with_a_link_that_still_finds_it():
    doc = vdoc("c1", "Lang/CSharp.md", "C# interop | Unity")
    doc["cite"] = vault_cite("Lang/CSharp.md", "C# interop | Unity")
    # `#` and `|` would start a nested heading and the alias: they read as spaces instead.
    assert doc["cite"] == "[[Lang/CSharp#C interop Unity]]"
    assert vault_cite("A.md", "^block-1") == "[[A#^block-1]]"
    assert vault_cite("A.md", "") == "[[A]]"
    assert cited_docs(f"see {doc['cite']}", [doc]) == [doc]
    assert cited_docs("see [[CSharp#Other]]", [doc]) == []


def test_merged_duplicates_are_cited_too():
    kept = vdoc("c1", "A.md", "H")
    kept["also"] = [{"kind": "vault", "chunk_id": "c9", "note_path": "B.md"}]
    records, _ = collect_citations("see [[A#H]]", [kept])
    assert [r["chunk_id"] for r in records] == ["c1", "c9"]


# -- extractive answer -----------------------------------------------------------------------
def test_extractive_answer_quotes_verbatim_lines_with_citations():
    text = (
        "# Title\n\nUnrelated line about cats.\n\n"
        "BeginPlay runs after the constructor.\nGetWorld is null in the constructor.\n"
    )
    excerpt = best_excerpt(text, {"beginplay", "getworld", "constructor"})
    assert "BeginPlay runs after the constructor." in excerpt
    assert all(line in text for line in excerpt.splitlines())
    doc = vdoc("c1", "Gameplay/Actor.md", "BeginPlay", text=text)
    answer, used = extractive_answer("BeginPlay 和 GetWorld", [doc], lead="No model.")
    assert used == ["c1"] and answer.startswith("No model.")
    assert (
        "> BeginPlay runs after the constructor." in answer
        and "[[Gameplay/Actor#BeginPlay]]" in answer
    )
    empty, used = extractive_answer("anything", [])
    assert not used and "nothing" in empty


# -- near-duplicate merging ------------------------------------------------------------------
def test_near_duplicates_merge_keeping_every_source():
    docs = [
        vdoc("a", "A.md", "H", grade=0.6, aspects=[0]),
        vdoc("b", "B.md", "H", grade=0.9, aspects=[1]),
        vdoc("c", "C.md", "H", grade=0.5, aspects=[0]),
    ]
    vectors = [[1.0, 0.0], [0.99, 0.05], [0.0, 1.0]]
    kept, merged = merge_near_duplicates(docs, vectors, threshold=0.95)
    assert merged == 1 and [d["id"] for d in kept] == ["b", "c"]  # best grade kept first
    assert kept[0]["aspects"] == [0, 1] and kept[0]["also"][0]["chunk_id"] == "a"
    assert docs[1]["also"] == []  # inputs untouched


# -- the chat provider on the wire -------------------------------------------------------------
MESSAGES = [SystemMessage("You are a test."), HumanMessage("hi")]


def test_structured_json_schema_then_function_calling_after_rejection():
    with FakeOpenAIServer() as server:
        model = chat_provider(server.base_url)
        server.queue_chat(ChatReply.json({"intent": "chitchat", "reply": "hey"}))
        decision, usage = asyncio.run(model.structured(IntentDecision, MESSAGES))
        assert decision.intent == "chitchat" and usage["llm_calls"] == 1
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
        assert server.chat_requests[0].body["response_format"]["type"] == "json_schema"
        assert server.chat_requests[0].body["max_tokens"] == 1024  # extra_body reaches the wire

    with FakeOpenAIServer() as server:  # a llama.cpp-like server: json_schema -> HTTP 500
        model = chat_provider(server.base_url)
        server.queue_error(500, "response_format json_schema unsupported", "chat/completions")
        server.default_chat_reply = ChatReply(
            tool_calls=[ToolCall("IntentDecision", {"intent": "off_topic"})]
        )
        decision, usage = asyncio.run(model.structured(IntentDecision, MESSAGES))
        assert decision.intent == "off_topic"
        assert usage == {**usage, "llm_calls": 1, "repair_retries": 1}
        _, again = asyncio.run(model.structured(IntentDecision, MESSAGES))
        assert again["repair_retries"] == 0  # remembered for this server
        assert [bool(r.body.get("tools")) for r in server.chat_requests] == [False, True, True]


def test_invalid_json_is_repaired_once_then_fails_cleanly():
    with FakeOpenAIServer() as server:
        model = chat_provider(server.base_url)
        server.queue_chat(ChatReply(content="{not json"), ChatReply.json({"intent": "unsafe"}))
        decision, usage = asyncio.run(model.structured(IntentDecision, MESSAGES))
        assert decision.intent == "unsafe" and usage["repair_retries"] == 1
        assert "could not be used" in server.chat_requests[1].body["messages"][-1]["content"]

        server.clear()
        server.default_chat_reply = ChatReply(content="still not json")
        with pytest.raises(StructuredOutputError):
            asyncio.run(model.structured(IntentDecision, MESSAGES))
        assert len(server.chat_requests) == 2  # bounded: one ask + max_repairs (1)


def test_json_mode_spells_out_the_schema():
    with FakeOpenAIServer() as server:
        model = chat_provider(server.base_url, llm_structured_method="json_mode")
        server.queue_chat(ChatReply.json({"intent": "on_topic"}))
        decision, _ = asyncio.run(model.structured(IntentDecision, MESSAGES))
        body = server.chat_requests[0].body
        assert decision.intent == "on_topic" and body["response_format"]["type"] == "json_object"
        assert "JSON schema" in body["messages"][-1]["content"]


def test_server_down_and_timeout_are_llm_unavailable():
    model = chat_provider(unused_base_url())
    with pytest.raises(LLMUnavailable, match="unreachable"):
        asyncio.run(model.structured(IntentDecision, MESSAGES))
    with FakeOpenAIServer() as server:
        server.delay = 1.0
        server.default_chat_reply = ChatReply.json({"intent": "on_topic"})
        slow = chat_provider(server.base_url, timeout=0.2)
        with pytest.raises(LLMUnavailable, match="timed out"):
            asyncio.run(slow.text(MESSAGES))


def test_a_stream_slow_to_its_first_token_waits_for_the_configured_timeout(monkeypatch):
    """A small model reading a long prompt on a slow CPU sends no content for minutes (the
    server may send keep-alives). langchain-openai's own per-chunk limit (120 s, or its
    LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S) must not cut it short of the configured
    `llm_timeout`; when the configured limit is reached it is a model failure (the graph falls
    back), not a crash."""
    monkeypatch.setenv("LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S", "0.5")  # stands in for 120 s
    with FakeOpenAIServer() as server:
        server.default_chat_reply = ChatReply(content="Late but fine.", stall_s=1.0)
        text, _ = asyncio.run(chat_provider(server.base_url, timeout=5.0).text(MESSAGES))
        assert text == "Late but fine."
        server.default_chat_reply = ChatReply(content="Too late.", stall_s=3.0)
        with pytest.raises(LLMUnavailable, match="timed out"):
            asyncio.run(chat_provider(server.base_url, timeout=1.0).text(MESSAGES))


def test_text_streams_deltas_and_counts_tokens():
    with FakeOpenAIServer() as server:
        model = chat_provider(server.base_url)
        server.queue_chat(
            ChatReply(
                content="one two three",
                usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            )
        )
        pieces: list[str] = []
        text, usage = asyncio.run(model.text(MESSAGES, pieces.append))
        assert text == "one two three" and len(pieces) == 3
        assert usage == {**zero_usage(), "llm_calls": 1, "prompt_tokens": 7, "completion_tokens": 3}
        assert server.chat_requests[0].body["stream"] is True
        assert server.chat_requests[0].body["stream_options"] == {"include_usage": True}


def test_streamed_tokens_are_estimated_when_the_server_reports_none():
    with FakeOpenAIServer() as server:
        server.ignore_stream_options = True  # like llama-cpp-python: no usage when streaming
        model = chat_provider(server.base_url)
        server.queue_chat(ChatReply(content="a b c d"))
        _, usage = asyncio.run(model.text(MESSAGES))
        assert usage["estimated_calls"] == 1 and usage["completion_tokens"] == 4
        assert usage["prompt_tokens"] > 0


def test_one_provider_serves_several_event_loops():
    """The CLI runs one `asyncio.run` per question and the server its own loop: a provider
    built once must not carry HTTP connections from one loop into the next."""
    with FakeOpenAIServer() as server:
        model = chat_provider(server.base_url)
        server.default_chat_reply = ChatReply(content="hello there")
        for _ in range(2):
            assert asyncio.run(model.text(MESSAGES))[0] == "hello there"
        assert len({id(m) for m in model._models.values()}) <= 2
