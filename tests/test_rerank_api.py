"""The re-ranking stage through the real app on a real uvicorn server: `POST /v1/search` hits
carry the re-ranker's score, `GET /v1/status` reports the stage and its fallbacks, and an
answer whose search fell back to the fused order says so — with a local HTTP server that
speaks the `/v1/rerank` protocol (`fakes/rerank_server.py`)."""

from __future__ import annotations

import json

import httpx
import pytest

from test_server_helpers import read_sse

from fakes.rerank_server import Failure, FakeRerankServer

RERANK = FakeRerankServer(shape="jina", api_key="rk")


def SERVER_SETTINGS(fake):
    RERANK.__enter__()
    return {"rerank": "http", "rerank_url": RERANK.url, "rerank_api_key": "rk", "rerank_timeout": 2}


@pytest.fixture(scope="module", autouse=True)
def _stop_rerank_server():
    yield
    RERANK.__exit__(None, None, None)


QUERY = "stat unit Game Draw GPU"


def test_search_hits_carry_the_rerank_score_and_status_counts_the_call(live, client) -> None:
    before = client.get("/v1/status").json()["rerank"]
    response = client.post("/v1/search", json={"query": QUERY, "k": 5})
    assert response.status_code == 200
    hits = response.json()["results"]
    assert hits and all(h["rerank_score"] is not None for h in hits)
    assert all(h["rerank_fallback"] is None for h in hits)
    scores = [h["rerank_score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert RERANK.requests[-1].headers["Authorization"] == "Bearer rk"
    status = client.get("/v1/status").json()["rerank"]
    assert status["kind"] == "http" and RERANK.url in status["label"]
    assert status["calls"] == before["calls"] + 1 and status["last_ok"] is True


def test_a_failing_reranker_keeps_the_search_working_and_status_says_so(live, client) -> None:
    RERANK.queue_failure(Failure(status=502))
    response = client.post("/v1/search", json={"query": QUERY, "k": 5})
    assert response.status_code == 200
    hits = response.json()["results"]
    assert hits and all("HTTP 502" in h["rerank_fallback"] for h in hits)
    assert all(h["rerank_score"] is None for h in hits)
    status = client.get("/v1/status").json()["rerank"]
    assert status["fallbacks"] >= 1 and status["last_ok"] is False
    assert "HTTP 502" in status["last_error"]


def test_an_answer_says_when_the_reranker_was_not_used(live) -> None:
    for _ in range(8):  # every search of this answer fails (no chat model: one or two)
        RERANK.queue_failure(Failure(status=503))
    final = None
    with (
        httpx.Client(timeout=60) as http,
        http.stream(
            "POST",
            f"{live.url}/v1/ask",
            json={"question": "What do Game, Draw and GPU mean in stat unit?"},
            headers={**live.auth, "Accept": "text/event-stream"},
        ) as response,
    ):
        assert response.status_code == 200
        for event in read_sse(response.iter_lines()):
            if event.event == "final":
                final = json.loads(event.data)
    RERANK._failures.clear()
    assert final is not None
    assert any("re-ranker was not used" in note and "HTTP 503" in note for note in final["notes"])
