"""`/v1/models` and `/v1/settings/models` on a real uvicorn server: the chat model chosen in
Obsidian, listed from and tried against a wire-level fake of an OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.openai_server import ChatReply, FakeOpenAIServer, unused_base_url

KEY = "sk-chat-test"
SERVER_SETTINGS = {"embeddings": "hash", "server_watch": False}


def SERVER_VAULT(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Lumen.md").write_text("# Lumen\n\nLumen bounces light between surfaces.\n")


@pytest.fixture(scope="module")
def chat_server():
    with FakeOpenAIServer(api_key=KEY, models=("llama3.2:3b", "qwen2.5:7b")) as server:
        yield server


@pytest.fixture(autouse=True)
def reset_choice(client):
    yield
    client.put("/v1/settings/models", json={"base_url": "", "model": "", "api_key": ""})


def test_without_a_choice_nothing_is_listed_and_the_source_is_the_settings(client):
    body = client.get("/v1/models").json()
    assert body["chat"]["source"] == "settings"
    assert body["chat"]["model"] is None
    assert body["chat"]["models"] == []
    assert "no model server" in body["chat"]["error"]
    assert body["embeddings"]["provider"] == "hash"
    assert "re-index" in body["embeddings"]["change"]


def test_a_pushed_server_is_listed_and_its_model_answers_questions(client, chat_server):
    choice = {"base_url": chat_server.base_url, "model": "qwen2.5:7b", "api_key": KEY}
    put = client.put("/v1/settings/models", json=choice)
    assert put.status_code == 200
    assert put.json()["chat"] == {
        "source": "plugin",
        "base_url": chat_server.base_url,
        "model": "qwen2.5:7b",
        "has_key": True,
        "models": [],
        "error": None,
    }
    listed = client.get("/v1/models").json()["chat"]
    assert listed["models"] == ["llama3.2:3b", "qwen2.5:7b"]
    assert KEY not in client.get("/v1/models").text  # keys go in, never out
    assert client.get("/v1/status").json()["llm_model"] == "qwen2.5:7b"
    # The next question goes to the chosen model, with the key.
    chat_server.clear()
    chat_server.default_chat_reply = ChatReply("Lumen bounces light [1].")
    try:
        with client.stream("POST", "/v1/ask", json={"question": "What does Lumen do?"}) as r:
            assert r.status_code == 200
            "".join(r.iter_text())
    finally:
        chat_server.default_chat_reply = None
    asked = chat_server.chat_requests
    assert asked, "the chosen model was never asked"
    assert {req.body["model"] for req in asked} == {"qwen2.5:7b"}
    assert all(req.headers.get("authorization") == f"Bearer {KEY}" for req in asked)


def test_try_shows_the_models_answer_and_changes_nothing(client, chat_server):
    chat_server.queue_chat("ready")
    choice = {"base_url": chat_server.base_url, "model": "llama3.2:3b", "api_key": KEY}
    result = client.post("/v1/settings/models/test", json=choice).json()
    assert result["ok"] is True
    assert result["reply"] == "ready"
    assert result["models"] == ["llama3.2:3b", "qwen2.5:7b"]
    assert result["message"].startswith("llama3.2:3b answered in")
    assert client.get("/v1/models", params={"list": "false"}).json()["chat"]["model"] is None


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"api_key": "wrong"}, "HTTP 401 (check the API key)"),
        ({"base_url": "DOWN"}, "nothing answers at"),
    ],
)
def test_a_failed_try_says_why_in_one_line(client, chat_server, choice, expected):
    body = {"base_url": chat_server.base_url, "model": "llama3.2:3b", "api_key": KEY, **choice}
    if body["base_url"] == "DOWN":
        body["base_url"] = unused_base_url()
    result = client.post("/v1/settings/models/test", json=body).json()
    assert result["ok"] is False
    assert expected in result["message"]
    assert "\n" not in result["message"]


def test_a_model_the_server_refuses_is_an_error_with_the_servers_words(client, chat_server):
    from fakes.openai_server import ErrorReply

    chat_server.queue_chat(ErrorReply(404, "model 'nope' not found"))
    body = {"base_url": chat_server.base_url, "model": "nope", "api_key": KEY}
    result = client.post("/v1/settings/models/test", json=body).json()
    assert result["ok"] is False
    assert "HTTP 404" in result["message"] and "not found" in result["message"]
    assert result["models"] == ["llama3.2:3b", "qwen2.5:7b"]


def test_unknown_fields_and_the_token_are_checked(client, live):
    assert client.put("/v1/settings/models", json={"modle": "x"}).status_code == 422
    import httpx

    assert httpx.get(f"{live.url}/v1/models").status_code == 401
