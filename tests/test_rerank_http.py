"""The `/v1/rerank` client (retrieval/rerank/http.py) against a local HTTP server that answers
like llama.cpp, Jina, Cohere, TEI and OpenAI-style proxies (`fakes/rerank_server.py`): every
request and reply shape, every failure, and `rerank_ids`' fallback to the fused order."""

from __future__ import annotations

import pytest

from vault_rag.retrieval.rerank.base import RerankError, rerank_ids
from vault_rag.retrieval.rerank.http import HttpReranker, endpoint, parse_scores

from fakes.openai_server import unused_base_url
from fakes.rerank_server import SHAPES, Failure, FakeRerankServer

QUERY = "how do I pin a tab"
DOCS = ["Sidebar: drag a note", "Pin a tab so it stays open", "Tabs: how to pin one tab"]
EXPECTED = [FakeRerankServer.relevance(QUERY, d) for d in DOCS]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_reply_shape_gives_one_score_per_document_in_document_order(shape: str) -> None:
    with FakeRerankServer(shape=shape) as server:
        reranker = HttpReranker(server.url, model="bge-reranker", timeout=5)
        assert reranker.score(QUERY, DOCS) == EXPECTED
        sent = server.requests[0]
    body = sent.body
    assert body["query"] == QUERY and body["documents"] == DOCS
    assert body["top_n"] == len(DOCS) and body["model"] == "bge-reranker"
    assert body["return_documents"] is False
    assert ("texts" in body) == (shape == "tei")  # TEI's native route reads `texts`
    assert "Authorization" not in sent.headers


def test_the_key_is_sent_as_a_bearer_token_and_a_wrong_key_falls_back() -> None:
    with FakeRerankServer(api_key="s3cret") as server:
        assert HttpReranker(server.url, api_key="s3cret").score(QUERY, DOCS) == EXPECTED
        assert server.requests[0].headers["Authorization"] == "Bearer s3cret"
        with pytest.raises(RerankError, match="HTTP 401"):
            HttpReranker(server.url, api_key="wrong").score(QUERY, DOCS)


def test_no_model_configured_sends_no_model_field() -> None:
    with FakeRerankServer() as server:
        HttpReranker(server.url).score(QUERY, DOCS)
        assert "model" not in server.requests[0].body


def test_a_bare_server_address_gets_the_v1_rerank_path() -> None:
    assert endpoint("http://127.0.0.1:8012") == "http://127.0.0.1:8012/v1/rerank"
    assert endpoint("http://127.0.0.1:8012/") == "http://127.0.0.1:8012/v1/rerank"
    assert endpoint("https://api.jina.ai/v1/rerank") == "https://api.jina.ai/v1/rerank"
    assert endpoint("http://tei:80/rerank") == "http://tei:80/rerank"
    with pytest.raises(ValueError):
        endpoint("ftp://example.org")


BAD_REPLIES = [
    (Failure(status=500), "HTTP 500"),
    (Failure(status=429, body='{"error": "rate limited"}'), "HTTP 429"),
    (Failure(body="<html>oops"), "not JSON"),
    (Failure(body='{"object": "list"}'), "no results list"),
    (Failure(body='{"results": []}'), "no results list"),
    (Failure(body='{"results": [{"index": 7, "relevance_score": 1.0}]}'), "out of range"),
    (Failure(body='{"results": [{"index": "0", "relevance_score": 1.0}]}'), "out of range"),
    (Failure(body='{"results": [{"index": 0, "relevance_score": "high"}]}'), "not a number"),
    (Failure(body='{"results": [{"index": 0, "relevance_score": NaN}]}'), "not finite"),
    (Failure(body='{"results": [3]}'), "not an object"),
]


@pytest.mark.parametrize(("failure", "message"), BAD_REPLIES)
def test_every_bad_reply_is_a_rerank_error(failure: Failure, message: str) -> None:
    with FakeRerankServer() as server:
        server.queue_failure(failure)
        with pytest.raises(RerankError, match=message):
            HttpReranker(server.url, timeout=5).score(QUERY, DOCS)


def test_a_slow_service_times_out() -> None:
    with FakeRerankServer() as server:
        server.queue_failure(Failure(delay=1.5))
        with pytest.raises(RerankError, match="timed out"):
            HttpReranker(server.url, timeout=0.3).score(QUERY, DOCS)


def test_an_unreachable_service_is_a_rerank_error() -> None:
    with pytest.raises(RerankError, match="unreachable"):
        HttpReranker(unused_base_url(), timeout=2).score(QUERY, DOCS)


def test_documents_left_out_of_the_reply_rank_below_every_scored_one() -> None:
    scores = parse_scores({"results": [{"index": 1, "relevance_score": 0.2}]}, 3)
    assert scores[1] == 0.2 and scores[0] == scores[2] == float("-inf")


def test_rerank_ids_reorders_the_top_candidates_and_keeps_the_rest() -> None:
    order = ["a", "b", "c", "d"]
    texts = dict(zip("abc", DOCS, strict=True))
    with FakeRerankServer() as server:
        reranker = HttpReranker(server.url)
        new, scores, outcome = rerank_ids(reranker, QUERY, order, texts, candidates=3)
    # "b" and "c" score alike (.5 each, 3 of 6 words): the fused order breaks the tie
    assert new == ["b", "c", "a", "d"]
    assert scores == {"a": EXPECTED[0], "b": EXPECTED[1], "c": EXPECTED[2]}
    assert outcome.applied and outcome.candidates == 3 and outcome.error is None
    assert reranker.health.calls == 1 and reranker.health.fallbacks == 0


def test_rerank_ids_keeps_the_fused_order_on_failure_and_counts_it() -> None:
    order = ["a", "b", "c"]
    texts = dict(zip("abc", DOCS, strict=True))
    with FakeRerankServer() as server:
        reranker = HttpReranker(server.url)
        server.queue_failure(Failure(status=503))
        new, scores, outcome = rerank_ids(reranker, QUERY, order, texts, candidates=3)
        assert new == order and scores == {} and not outcome.applied
        assert "HTTP 503" in (outcome.error or "") and "fused order" in (outcome.note() or "")
        rerank_ids(reranker, QUERY, order, texts, candidates=3)  # the service is back
    health = reranker.health.to_dict()
    assert health["calls"] == 2 and health["fallbacks"] == 1
    assert health["last"]["applied"] is True and "HTTP 503" in health["last_error"]
