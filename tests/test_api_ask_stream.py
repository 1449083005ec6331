"""`POST /v1/ask` read as a browser reads an event stream, on a real uvicorn server: events in
order, two streams at once, a disconnect cancels the run, the thread is stored. The chat model
is the scripted model on the wire-level fake OpenAI server (which also serves embeddings)."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from test_graph_helpers import ScriptedModel
from test_server_helpers import LiveServer, fake_chat_settings, read_sse, wait_until
from vault_rag.graph.events import EVENT_MODELS

from fakes.openai_server import ChatReply

TOKEN = "test-token-0123456789"
QUESTION = "BeginPlay 和构造函数有什么区别？"
MODELS = {model.EVENT: model for model in EVENT_MODELS}


SERVER_SETTINGS = fake_chat_settings  # the module's live server (conftest `live`)


@pytest.fixture
def model(fake):
    scripted = ScriptedModel()
    fake.default_chat_reply = scripted
    fake.chunk_delay = 0.0
    yield scripted
    fake.default_chat_reply = None
    fake.chunk_delay = 0.0


def ask(live: LiveServer, body: dict) -> list[tuple[str, dict]]:
    events = []
    with (
        httpx.Client(timeout=60) as client,
        client.stream(
            "POST",
            f"{live.url}/v1/ask",
            json=body,
            headers={**live.auth, "Accept": "text/event-stream", "Origin": "app://obsidian.md"},
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["access-control-allow-origin"] == "app://obsidian.md"
        for event in read_sse(response.iter_lines()):
            data = json.loads(event.data)
            # The contract: every event is one the spec documents, its data that model's JSON.
            assert event.event in MODELS, f"undocumented event {event.event!r}"
            MODELS[event.event].model_validate(data)
            events.append((event.event, data))
    return events


def test_stream_has_progress_then_deltas_then_citations_and_final(live, model):
    events = ask(live, {"question": QUESTION})
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "progress" and kinds[-2:] == ["citations", "final"]
    first_delta = kinds.index("delta")
    assert "progress" in kinds[:first_delta]  # the user sees steps before text
    assert "final" not in kinds[:-1] and "error" not in kinds
    nodes = [data["node"] for kind, data in events if kind == "progress"]
    assert nodes[:2] == ["take_question", "classify_intent"] and "finish" in nodes
    final = events[-1][1]
    streamed = "".join(data["text"] for kind, data in events if kind == "delta")
    assert streamed == final["answer"] and final["answer_id"]
    assert set(final["usage"]) == {
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "repair_retries",
    }
    assert final["usage"]["llm_calls"] == final["llm_calls"] > 0
    assert final["citations"] == events[-2][1]["citations"]
    assert final["thread_id"]

    with httpx.Client(base_url=live.url, headers=live.auth) as client:
        thread = client.get(f"/v1/threads/{final['thread_id']}").json()
        assert [m["role"] for m in thread["messages"]] == ["user", "assistant"]
        assert thread["messages"][0]["content"] == QUESTION
        assert thread["messages"][1]["content"] == final["answer"]
        assert client.get("/v1/threads/unknown-thread").status_code == 404
        assert client.get("/v1/threads/bad%20id").status_code == 422

    follow_up = ask(live, {"question": "那 Tick 呢？", "thread_id": final["thread_id"]})
    assert follow_up[-1][1]["thread_id"] == final["thread_id"]


def test_two_streams_at_once(live, model):
    results: dict[int, list[tuple[str, dict]]] = {}

    def run(i: int) -> None:
        results[i] = ask(live, {"question": f"{QUESTION} ({i})"})

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(results) == [0, 1]
    assert all(events[-1][0] == "final" for events in results.values())
    assert results[0][-1][1]["answer_id"] != results[1][-1][1]["answer_id"]


def test_disconnect_cancels_the_run(live, model, fake):
    # Two aspects: after both answers stream (~3 s), a running graph would call `synthesize`.
    model.aspects = ["BeginPlay 是什么时候调用的？", "构造函数里能做什么？"]
    model.overrides["answer"] = ChatReply(content=" ".join(f"word{i}" for i in range(30)))
    fake.chunk_delay = 0.1
    counts = live.state.asks
    cancelled, completed = counts.cancelled, counts.completed
    with (
        httpx.Client(timeout=60) as client,
        client.stream(
            "POST", f"{live.url}/v1/ask", json={"question": QUESTION}, headers=live.auth
        ) as response,
    ):
        for event in read_sse(response.iter_lines()):
            if event.event == "progress" and json.loads(event.data)["node"] == "deduplicate":
                break  # the aspect answers are being written: the user closes the pane
    wait_until(lambda: counts.cancelled == cancelled + 1, 10)
    assert counts.running == 0 and counts.completed == completed
    time.sleep(5)  # past the time the answers would have finished streaming
    assert model.count("answer") <= 2 and model.count("synthesize") == 0
    assert counts.completed == completed


def test_model_failure_becomes_an_error_or_fallback_not_a_broken_stream(live, fake):
    fake.default_chat_reply = None  # every chat call now fails with HTTP 400
    try:
        events = ask(live, {"question": QUESTION})
    finally:
        fake.default_chat_reply = None
    assert events[-1][0] in ("final", "error")
    if events[-1][0] == "error":
        assert set(events[-1][1]) == {"code", "message"}
