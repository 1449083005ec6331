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


def _ask(client, **body) -> str:
    with client.stream("POST", "/v1/ask", json={"question": "What does Lumen do?", **body}) as r:
        assert r.status_code == 200
        return "".join(r.iter_text())


def test_a_question_can_pick_another_model_of_the_server_for_itself_only(client, chat_server):
    """The pane's per-conversation picker: `model` in the ask goes to the same server with the
    same key, and the next question without it is answered by the model in use again."""
    choice = {"base_url": chat_server.base_url, "model": "qwen2.5:7b", "api_key": KEY}
    assert client.put("/v1/settings/models", json=choice).status_code == 200
    chat_server.default_chat_reply = ChatReply("Lumen bounces light [1].")
    try:
        chat_server.clear()
        _ask(client, model="llama3.2:3b")
        picked = chat_server.chat_requests
        assert picked and {req.body["model"] for req in picked} == {"llama3.2:3b"}
        assert all(req.headers.get("authorization") == f"Bearer {KEY}" for req in picked)
        chat_server.clear()
        _ask(client)
        assert {req.body["model"] for req in chat_server.chat_requests} == {"qwen2.5:7b"}
        # An empty model: no chat model for this question (it quotes the notes).
        chat_server.clear()
        text = _ask(client, model="")
        assert chat_server.chat_requests == []
        assert "event: final" in text
    finally:
        chat_server.default_chat_reply = None
    assert client.get("/v1/models?list=false").json()["chat"]["model"] == "qwen2.5:7b"


def test_a_picked_model_the_server_does_not_have_is_named_in_the_answer(client, chat_server):
    """The answer falls back to quoting the notes and says the server refused that model."""
    choice = {"base_url": chat_server.base_url, "model": "qwen2.5:7b", "api_key": KEY}
    client.put("/v1/settings/models", json=choice)
    chat_server.strict_models = True
    try:
        text = _ask(client, model="gone:1b")
    finally:
        chat_server.strict_models = False
    final = text.split("event: final", 1)[1]
    assert "The model `gone:1b` does not exist" in final
    assert "Lumen bounces light" in final
    assert client.post("/v1/ask", json={"question": "q", "model": "x" * 300}).status_code == 422
