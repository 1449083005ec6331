"""`GET /v1/threads` on a real uvicorn server: the stored conversations, newest first, with
their title, last change and message count, paged with `limit` / `before`.

The module's server (conftest `live`) has no language model, so each question gets the
graph's extractive answer and is stored like any other turn. The tests run in file order on
one server: the first sees no conversation yet."""

from __future__ import annotations

import json
from datetime import datetime

import httpx

from test_server_helpers import LiveServer, read_sse

SERVER_SETTINGS = {"server_watch": False}

FIRST = "Why do raw pointers in a TArray turn into dangling pointers?"
SECOND = "BeginPlay 和构造函数有什么区别？"
LONG = "What does   the garbage collector\ndo with " + "a UObject that nothing references " * 5


def ask(live: LiveServer, question: str, thread_id: str | None = None) -> str:
    """Ask `question` (on `thread_id`) and return the answer's thread id."""
    body = {"question": question, **({"thread_id": thread_id} if thread_id else {})}
    with (
        httpx.Client(timeout=120) as client,
        client.stream("POST", f"{live.url}/v1/ask", json=body, headers=live.auth) as response,
    ):
        assert response.status_code == 200
        events = list(read_sse(response.iter_lines()))
    assert events[-1].event == "final", [e.event for e in events]
    return json.loads(events[-1].data)["thread_id"]


def threads(client: httpx.Client, **params: object) -> dict:
    response = client.get("/v1/threads", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_no_conversation_yet_is_an_empty_list(client):
    assert threads(client) == {"threads": [], "next_before": None}


def test_newest_first_with_title_time_and_count(live, client):
    first = ask(live, FIRST)
    second = ask(live, SECOND)
    listed = threads(client)["threads"]
    assert [t["thread_id"] for t in listed] == [second, first]
    assert [t["title"] for t in listed] == [SECOND, FIRST]
    assert [t["message_count"] for t in listed] == [2, 2]

    ask(live, "And how does TObjectPtr help?", first)  # a follow-up moves the thread up
    listed = threads(client)["threads"]
    assert [t["thread_id"] for t in listed] == [first, second]
    assert listed[0]["title"] == FIRST  # still the first question
    assert listed[0]["message_count"] == 4
    times = [datetime.fromisoformat(t["updated_at"]) for t in listed]
    assert times[0] > times[1] and all(t.tzinfo is not None for t in times)
    # Each listed thread is one `GET /v1/threads/{id}` can read, with that many messages.
    thread = client.get(f"/v1/threads/{first}").json()
    assert len(thread["messages"]) == 4 and thread["messages"][0]["content"] == FIRST


def test_title_is_the_first_question_on_one_line_cut_short(live, client):
    thread_id = ask(live, LONG)
    item = threads(client)["threads"][0]
    assert item["thread_id"] == thread_id
    title = item["title"]
    assert len(title) == 80 and title.endswith("…")
    assert "\n" not in title and "  " not in title
    assert title.startswith("What does the garbage collector do with a UObject")


def test_pages_with_limit_and_before(client):
    everything = threads(client)["threads"]
    assert len(everything) == 3
    seen = []
    page = threads(client, limit=2)
    while True:
        assert len(page["threads"]) <= 2
        seen += page["threads"]
        if page["next_before"] is None:
            break
        page = threads(client, limit=2, before=page["next_before"])
    assert seen == everything  # every thread once, in order, and the last page says so
    assert threads(client, limit=3)["next_before"] is None


def test_bad_paging_is_422(client):
    assert client.get("/v1/threads", params={"limit": 0}).status_code == 422
    assert client.get("/v1/threads", params={"limit": 201}).status_code == 422
    assert client.get("/v1/threads", params={"before": "x' OR 1=1 --"}).status_code == 422


def test_needs_the_token(live):
    for headers in ({}, {"Authorization": "Bearer wrong-token"}):
        response = httpx.get(f"{live.url}/v1/threads", headers=headers)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"


def test_a_conversation_read_back_keeps_each_answers_id_and_citations(live, client):
    """Restored turns keep their sources, 👍/👎 and Save as note (issue 29): each answer comes
    back with the id it was given and the citations its stream sent."""
    body = {"question": FIRST}
    with client.stream("POST", "/v1/ask", json=body) as response:
        events = list(read_sse(response.iter_lines()))
    final = json.loads(events[-1].data)
    thread = client.get(f"/v1/threads/{final['thread_id']}").json()
    question, answer = thread["messages"]
    assert question["citations"] == []
    assert answer["id"] == final["answer_id"]
    assert answer["citations"] == final["citations"] and answer["citations"]
    promoted = client.post(f"/v1/answers/{answer['id']}/feedback", json={"rating": 1})
    assert promoted.status_code == 200
