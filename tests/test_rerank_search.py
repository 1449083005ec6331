"""The re-ranking stage inside `hybrid_search` (retrieval/rerank/), on a real index (manifest,
embedded Chroma, BM25) of the sample vault: with a `/v1/rerank` service and with a chat model
(listwise), both local HTTP servers speaking the real wire protocol; every failure keeps the
fused order and says so; `vault-rag eval --rerank` scores with it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.embeddings.base import estimate_tokens
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.retrieval.rerank.factory import MisconfiguredReranker, make_reranker, reranker_for
from vault_rag.retrieval.rerank.http import HttpReranker
from vault_rag.retrieval.rerank.llm import LlmReranker, parse_ranking
from vault_rag.settings import Settings

from fakes.openai_server import ChatReply, ErrorReply, FakeOpenAIServer
from fakes.rerank_server import Failure, FakeRerankServer

QUERY = "Tick Group TG_PrePhysics 物理"
# the units in the re-ranked order are compared as they were sent: no re-citing (cite_spans)
BASE = SearchOptions(k=8, per_note_cap=8, note_weight=0.0, cite_spans=False)


def _ids(results) -> list[str]:
    return [r.chunk_id for r in results]


def test_an_http_reranker_reorders_the_candidates_and_records_its_scores(hashed_index) -> None:
    fused = hybrid_search(hashed_index, QUERY, BASE)
    with FakeRerankServer() as server:
        reranker = HttpReranker(server.url, model="m", timeout=5)
        options = replace(BASE, reranker=reranker, rerank_candidates=12)
        reranked = hybrid_search(hashed_index, QUERY, options)
        sent = server.requests[0].body
    assert len(sent["documents"]) == 12  # top `rerank_candidates` in
    assert all(len(d) <= options.rerank_doc_chars for d in sent["documents"])
    scores = [r.rerank_score for r in reranked]
    assert all(s is not None for s in scores)  # the first 8 results were all re-scored
    assert scores == sorted(scores, reverse=True)
    assert all(r.rerank_fallback is None for r in reranked)
    # same hit objects: every field but the order and the rerank score is the fused search's
    by_id = {r.chunk_id: r for r in fused}
    for result in reranked:
        if result.chunk_id in by_id:
            assert replace(result, rerank_score=None) == by_id[result.chunk_id]
    assert reranker.health.calls == 1


@pytest.mark.parametrize(
    "failure", [Failure(status=500), Failure(body="not json"), Failure(delay=1.0)]
)
def test_a_failing_reranker_keeps_the_fused_order_and_says_why(hashed_index, failure) -> None:
    fused = hybrid_search(hashed_index, QUERY, BASE)
    with FakeRerankServer() as server:
        server.queue_failure(failure)
        reranker = HttpReranker(server.url, timeout=0.3)
        results = hybrid_search(hashed_index, QUERY, replace(BASE, reranker=reranker))
    assert _ids(results) == _ids(fused)
    assert all(r.rerank_score is None for r in results)
    assert results[0].rerank_fallback and all(
        r.rerank_fallback == results[0].rerank_fallback for r in results
    )
    assert reranker.health.fallbacks == 1


def test_a_misconfigured_reranker_falls_back_on_every_search(hashed_index) -> None:
    reranker = reranker_for(Settings.model_construct(rerank="http", rerank_url=None))
    assert isinstance(reranker, MisconfiguredReranker)
    results = hybrid_search(hashed_index, QUERY, replace(BASE, reranker=reranker))
    assert _ids(results) == _ids(hybrid_search(hashed_index, QUERY, BASE))
    assert "rerank_url" in (results[0].rerank_fallback or "")
    assert reranker_for(Settings.model_construct(rerank="none")) is None


def test_the_factory_builds_each_kind() -> None:
    http = make_reranker(
        Settings.model_construct(rerank="http", rerank_url="http://127.0.0.1:9", rerank_model="x")
    )
    assert isinstance(http, HttpReranker) and http.url == "http://127.0.0.1:9/v1/rerank"
    llm = make_reranker(
        Settings.model_construct(rerank="llm", llm_model="smollm2", llm_base_url="http://h/v1")
    )
    assert isinstance(llm, LlmReranker) and llm.url == "http://h/v1/chat/completions"
    broken = reranker_for(Settings.model_construct(rerank="llm", llm_model=None))
    assert isinstance(broken, MisconfiguredReranker) and "llm_model" in broken.problem


@pytest.fixture(scope="module")
def chat():
    with FakeOpenAIServer() as server:
        yield server


def test_the_llm_reranker_asks_once_within_its_budget_and_follows_the_ranking(
    hashed_index, chat
) -> None:
    fused = hybrid_search(hashed_index, QUERY, BASE)
    chat.clear()
    chat.queue_chat(ChatReply.json({"ranking": [3, 1]}))
    reranker = LlmReranker("smollm2", chat.base_url, max_candidates=6, token_budget=600)
    results = hybrid_search(hashed_index, QUERY, replace(BASE, reranker=reranker))
    assert len(chat.chat_requests) == 1
    body = chat.chat_requests[0].body
    prompt = body["messages"][-1]["content"]
    assert "[6]" in prompt and "[7]" not in prompt  # bounded candidates
    assert sum(estimate_tokens(m["content"]) for m in body["messages"]) <= 600
    assert body["max_tokens"] <= 16 + 4 * 6 and body["model"] == "smollm2"
    # passages 3 and 1 of the prompt lead; the rest keep the fused order
    assert _ids(results)[:2] == [fused[2].chunk_id, fused[0].chunk_id]
    assert _ids(results)[2:] == [i for i in _ids(fused) if i not in _ids(results)[:2]][:6]
    assert results[0].rerank_score == 2.0 and results[1].rerank_score == 1.0


@pytest.mark.parametrize(
    "reply", [ChatReply("I cannot rank these."), ErrorReply(status=500), ChatReply("[99, 0]")]
)
def test_an_unusable_llm_ranking_keeps_the_fused_order(hashed_index, chat, reply) -> None:
    chat.clear()
    chat.queue_chat(reply)
    reranker = LlmReranker("smollm2", chat.base_url, timeout=5)
    results = hybrid_search(hashed_index, QUERY, replace(BASE, reranker=reranker))
    assert _ids(results) == _ids(hybrid_search(hashed_index, QUERY, BASE))
    assert results[0].rerank_fallback


def test_parse_ranking_reads_json_or_bare_numbers() -> None:
    assert parse_ranking('{"ranking": [2, "3", 2, 9, true]}', 4) == [2, 3]
    assert parse_ranking("Ranking: 4, 1, 2", 4) == [4, 1, 2]
    assert parse_ranking('```json\n{"ranking": []}\n```', 4) == []


def test_eval_rerank_scores_the_search_with_the_configured_reranker(
    tmp_path: Path, sample_vault: Path, monkeypatch
) -> None:
    vault = tmp_path / "vault"
    (vault / "Gameplay").mkdir(parents=True)
    shutil.copy(sample_vault / "Gameplay/Actor 生命周期.md", vault / "Gameplay/Actor 生命周期.md")
    qa = tmp_path / "qa.jsonl"
    question = {
        "id": "q",
        "question": "TG_PrePhysics 适合放什么逻辑？",
        "gold": ["Gameplay/Actor 生命周期.md"],
        "gold_heading": "Tick Group",
        "kind": "lexical",
        "lang": "zh",
    }
    qa.write_text(json.dumps(question, ensure_ascii=False) + "\n", "utf-8")
    args = ["eval", str(qa), "--vault", str(vault), "--data-dir", str(tmp_path / "d"), "--json"]
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    runner = CliRunner()
    refused = runner.invoke(app, [*args, "--rerank"])
    assert refused.exit_code == 1 and "--rerank needs a re-ranker" in refused.output
    with FakeRerankServer() as server:
        monkeypatch.setenv("VAULT_RAG_RERANK", "http")
        monkeypatch.setenv("VAULT_RAG_RERANK_URL", server.url)
        result = runner.invoke(app, [*args, "--rerank"])
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 1  # one question, one re-ranking request
    report = json.loads(result.stdout)
    assert set(report["systems"]) == {"ours", "ours+rerank"}
    assert report["options"]["rerank"] == "http"
    assert report["systems"]["ours+rerank"]["note"]["overall"]["recall@1"] == 1.0
