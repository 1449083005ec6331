"""Issue 31, defect 9: asks starved under search load. With 50 searches in flight, 10 asks took
a median 93 s against 5.8 s alone: every search ran at once on the shared threads, each
embedding its query, and an ask's retrieval waited behind all of them. Searches now run at
most `server_search_concurrency` at once (the rest wait in line) and asks run outside that
line. Measured on the wire: the fake embedding server answers slowly and counts the requests
it answers at once. A real uvicorn server; the figure is in docs/benchmarks.md."""

from __future__ import annotations

import json
import threading

from test_server_helpers import LiveServer

SEARCHES = 12
SERVER_SETTINGS = {"server_search_concurrency": 2}
QUESTION = "How do I keep an actor from being garbage collected?"


def test_searches_wait_in_line_and_an_ask_goes_past_them(live: LiveServer, fake) -> None:
    fake.delay = 0.25  # each query embedding takes a while, as a loaded model's does
    fake.clear()
    answered: list[str] = []

    def search(i: int) -> None:
        with live.client() as client:
            response = client.post("/v1/search", json={"query": f"蓝图 Blueprint {i}", "k": 3})
            answered.append(f"search {response.status_code}")

    def ask() -> None:
        with live.client() as client:
            with client.stream("POST", "/v1/ask", json={"question": QUESTION}) as response:
                events = [line for line in response.iter_lines() if line.startswith("event: ")]
            answered.append("ask " + json.dumps(events[-1:]))

    try:
        searches = [threading.Thread(target=search, args=(i,)) for i in range(SEARCHES)]
        for thread in searches:
            thread.start()
        while len(fake.embedding_requests) < 2:  # the line has formed
            threading.Event().wait(0.02)
        asking = threading.Thread(target=ask)
        asking.start()
        for thread in [*searches, asking]:
            thread.join(120)
    finally:
        fake.delay = 0.0
    assert answered.count("search 200") == SEARCHES, answered
    assert 'ask ["event: final"]' in answered, answered
    # Two searches at once, plus the ask's own query embedding: never the whole crowd.
    assert fake.max_in_flight <= 3, fake.max_in_flight
    inputs = [" ".join(map(str, r.inputs)) for r in fake.embedding_requests]
    asked_at = next(i for i, text in enumerate(inputs) if "garbage collected" in text)
    searched_after = [i for i, text in enumerate(inputs) if "Blueprint" in text and i > asked_at]
    assert len(searched_after) >= SEARCHES // 2, inputs  # the ask went ahead of most of them
