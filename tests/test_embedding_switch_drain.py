"""A switch of embedding model lets the requests already running on the old index finish
(`api/embedding_swap.py`, `serving/in_flight.py`), on a real uvicorn server over a copy of the
sample vault with real Chroma and BM25. The hash stand-in is the model in use; the wire-level
fake OpenAI server is the new embedding model and the chat model, whose planning call is held
open by the test (a slow model), so the switch begins while the answer streams and the answer
still has to search the old index after it began.

- an answer streaming when the swap begins completes (citations, final) on the old index;
- a request arriving during the drain gets 503 `switching` with Retry-After (`/mcp`: 503
  `switching`), except `GET /v1/status` and `GET /v1/settings/embeddings`, which answer from
  the old index with the switch's step;
- past `server_switch_drain_timeout` the answer is stopped with `error` `switched`, and the
  switch completes anyway.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from test_graph_helpers import ScriptedModel, node_of
from test_server_helpers import LiveServer, fake_chat_settings, read_sse, wait_until
from vault_rag.api.app import create_app
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.graph.events import EVENT_MODELS
from vault_rag.settings import Settings

from fakes.openai_server import FakeOpenAIServer

TOKEN = "test-token-0123456789"
KEY = "sk-embed-secret-4242"
HASH_ID = HashProvider().model_id
QUESTION = "BeginPlay 和构造函数有什么区别？"
MODELS = {model.EVENT: model for model in EVENT_MODELS}


class HeldAnswer:
    """The chat model, answering like `ScriptedModel` but holding the planning call (before
    retrieval) until `released` (the fake's request thread waits: a model still thinking)."""

    def __init__(self) -> None:
        self.model = ScriptedModel()
        self.reached = threading.Event()
        self.released = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Any:
        if node_of(body) == "plan":
            self.reached.set()
            self.released.wait(60)
        return self.model(body)


@pytest.fixture
def fake():
    with FakeOpenAIServer(dimension=48, api_key=KEY) as server:
        held = HeldAnswer()
        server.default_chat_reply = held
        server.held = held  # type: ignore[attr-defined]
        yield server
        held.released.set()  # never leave the fake's thread waiting


def serve(tmp_path: Path, sample_vault: Path, fake: FakeOpenAIServer, **overrides: Any):
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault, vault)
    chat = fake_chat_settings(fake) | {"llm_api_key": KEY}
    settings = Settings(
        vault=vault,
        data_dir=tmp_path / "data",
        embeddings="hash",
        tavily_api_key=None,
        **chat,
        **overrides,
    )
    return LiveServer(create_app(settings, token=TOKEN), token=TOKEN)


def ask(live: LiveServer, events: list[tuple[str, dict]]) -> None:
    """Stream one answer into `events`, checking each against the documented event models."""
    with (
        httpx.Client(timeout=120) as client,
        client.stream(
            "POST", f"{live.url}/v1/ask", json={"question": QUESTION}, headers=live.auth
        ) as response,
    ):
        assert response.status_code == 200, response.read()
        for event in read_sse(response.iter_lines()):
            data = json.loads(event.data)
            MODELS[event.event].model_validate(data)
            events.append((event.event, data))


def start_asking(live: LiveServer, fake: FakeOpenAIServer) -> tuple[threading.Thread, list]:
    events: list[tuple[str, dict]] = []
    asking = threading.Thread(target=ask, args=(live, events), daemon=True)
    asking.start()
    assert fake.held.reached.wait(60), "the question never reached the chat model"
    return asking, events


def confirm_switch(client: httpx.Client, fake: FakeOpenAIServer) -> None:
    choice = {
        "provider": "openai",
        "model": "fake-embedding",
        "base_url": fake.base_url,
        "api_key": KEY,
        "confirm": True,
    }
    started = client.put("/v1/settings/embeddings", json=choice)
    assert started.status_code == 200 and started.json()["started"] is True, started.text


def switch_state(live: LiveServer) -> str:
    return live.app.state.embedding_rebuild.status.state


def wait_done(client: httpx.Client, live: LiveServer) -> None:
    wait_until(lambda: switch_state(live) in ("done", "failed"), 240, interval=0.2)
    assert switch_state(live) == "done", live.app.state.embedding_rebuild.status
    status = client.get("/v1/status").json()
    assert status["index_model"] == status["embedding_model"] == "openai:fake-embedding"


def test_an_answer_streaming_when_the_swap_begins_completes(tmp_path, sample_vault, fake):
    with serve(tmp_path, sample_vault, fake) as live, live.client() as client:
        assert live.state.writer.wait_idle(300)
        old = live.state
        asking, events = start_asking(live, fake)
        confirm_switch(client, fake)

        def refused() -> httpx.Response | None:
            response = client.post("/v1/search", json={"query": "BeginPlay", "k": 3})
            return response if response.status_code == 503 else None

        # The new index is built; the swap now waits for the answer on the old one.
        during = wait_until(refused, 240, interval=0.1)
        assert during.json()["code"] == "switching", during.text
        assert during.headers["retry-after"] == "3"
        again = client.post("/v1/ask", json={"question": QUESTION})
        assert again.status_code == 503 and again.json()["code"] == "switching"
        assert again.headers["retry-after"] == "3"
        mcp = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert mcp.status_code == 503 and mcp.json()["code"] == "switching", mcp.text
        # Status alone still answers, from the old index, with the switch's step (a read the
        # drain does not wait for: the answer stays the one request it counts).
        status = client.get("/v1/status")
        assert status.status_code == 200, status.text
        assert status.json()["index_model"] == HASH_ID and status.json()["notes"] > 0
        switch = status.json()["embedding_switch"]
        assert switch["state"] == "swapping" and "finishing the answers" in switch["message"]
        # ...and so does the embedding settings' state, which the plugin follows the switch by.
        followed = client.get("/v1/settings/embeddings")
        assert followed.status_code == 200, followed.text
        assert followed.json()["switch"]["state"] == "swapping"
        assert followed.json()["index_model"] == HASH_ID
        assert switch_state(live) == "swapping"
        assert old.in_flight.running == 1  # the answer, still holding the old state
        assert asking.is_alive() and not any(kind == "final" for kind, _ in events)

        fake.held.released.set()
        asking.join(120)
        kinds = [kind for kind, _ in events]
        assert "error" not in kinds, events
        assert kinds[-2:] == ["citations", "final"], kinds
        final = events[-1][1]
        assert final["answer"] and final["citations"] == events[-2][1]["citations"]
        assert final["citations"], "retrieval after the swap began searched the old index"
        assert old.asks.completed == 1 and old.asks.cancelled == 0

        wait_done(client, live)
        assert live.state is not old
        hits = client.post("/v1/search", json={"query": "BeginPlay", "k": 3})
        assert hits.status_code == 200 and hits.json()["results"]


def test_an_answer_past_the_drain_timeout_is_stopped_and_the_switch_completes(
    tmp_path, sample_vault, fake
):
    with (
        serve(tmp_path, sample_vault, fake, server_switch_drain_timeout=0.5) as live,
        live.client() as client,
    ):
        assert live.state.writer.wait_idle(300)
        old = live.state
        asking, events = start_asking(live, fake)
        confirm_switch(client, fake)
        asking.join(240)  # the model never answers: the switch stops the stream
        assert not asking.is_alive()
        kind, data = events[-1]
        assert kind == "error" and data["code"] == "switched", events[-3:]
        assert "ask again" in data["message"]
        assert not any(kind == "final" for kind, _ in events)
        wait_done(client, live)
        assert old.asks.cancelled == 1 and old.asks.running == 0
        assert old.in_flight.running == 0

        fake.held.released.set()  # the model answers again: the new index serves the next ask
        events = []
        ask(live, events)
        assert [kind for kind, _ in events][-1] == "final", events[-3:]
