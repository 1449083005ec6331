"""Every answer that gets an `answer_id` can be rated (issue 31): a small-talk reply and a
"your notes do not cover this" decline are answers the pane shows with 👍/👎, so
`POST /v1/answers/{id}/feedback` and `/promote` must know them, as they know finished answers.

A real uvicorn server (conftest `live`) whose chat model is the scripted model on the
wire-level fake OpenAI server."""

from __future__ import annotations

import json

import httpx
import pytest

from test_graph_helpers import ScriptedModel
from test_server_helpers import LiveServer, fake_chat_settings, read_sse

# Nothing in the sample vault is near this, in words or in meaning: the evidence is weak.
UNCOVERED = "zqxjv plorbnik wuggle frindle?"


SERVER_SETTINGS = fake_chat_settings  # the module's live server (conftest `live`)


@pytest.fixture
def model(fake):
    scripted = ScriptedModel()
    fake.default_chat_reply = scripted
    yield scripted
    fake.default_chat_reply = None


def ask(live: LiveServer, question: str) -> tuple[list[str], dict]:
    """The progress nodes and the final event of one ask."""
    with (
        httpx.Client(timeout=120) as client,
        client.stream(
            "POST", f"{live.url}/v1/ask", json={"question": question}, headers=live.auth
        ) as response,
    ):
        assert response.status_code == 200
        events = list(read_sse(response.iter_lines()))
    assert events[-1].event == "final", [e.event for e in events]
    nodes = [json.loads(e.data)["node"] for e in events if e.event == "progress"]
    return nodes, json.loads(events[-1].data)


def rate_and_read_back(client: httpx.Client, final: dict) -> None:
    answer_id = final["answer_id"]
    assert answer_id
    rated = client.post(f"/v1/answers/{answer_id}/feedback", json={"rating": -1})
    assert rated.status_code == 200, rated.text
    assert rated.json() == {"answer_id": answer_id, "rating": -1, "recorded": True}
    # The conversation read back names the same id, so a restored turn can be rated too.
    thread = client.get(f"/v1/threads/{final['thread_id']}").json()
    assert thread["messages"][-1]["id"] == answer_id
    assert thread["messages"][-1]["content"] == final["answer"]


def test_a_small_talk_reply_can_be_rated(live, client, model):
    model.intent = "chitchat"
    nodes, final = ask(live, "hi there!")
    assert nodes[-1] == "small_talk"
    assert final["answer"] == "Hi! Ask me about your notes."
    rate_and_read_back(client, final)


def test_a_not_covered_decline_can_be_rated(live, client, model):
    nodes, final = ask(live, UNCOVERED)
    assert nodes[-1] == "decline"
    assert final["answer"].startswith("Your notes do not cover this"), final["answer"]
    rate_and_read_back(client, final)


def test_a_refusal_has_no_answer_id_to_rate(live, model):
    """An off-topic or unsafe refusal is kept out of the conversation and has no id: there is
    nothing to rate, and the pane shows no 👍/👎 for it."""
    model.intent = "off_topic"
    nodes, final = ask(live, "What is the capital of France?")
    assert nodes[-1] == "decline"
    assert final["answer_id"] == ""
