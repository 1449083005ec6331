"""Faults found by probing the sidecar as an attacker or an unlucky client would (issue 13),
each on a real uvicorn server over a copy of the sample vault: an unfinished request body,
the middleware's error bodies, non-finite numbers, concurrent turns on one thread."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time

import httpx
import pytest

from test_server_helpers import (
    LiveServer,
    index_snapshot,
    read_sse,
    rebuild_snapshot,
    server_settings,
    snapshot_diff,
    wait_idle,
    wait_until,
)
from vault_rag.api import create_app

TOKEN = "test-token-0123456789"
ERROR_KEYS = {"code", "message", "detail"}


# The module's live server (conftest `live`): no watcher, a short body timeout.
SERVER_SETTINGS = {"server_watch": False, "server_body_timeout": 1.0}


def raw_request(live: LiveServer, head: bytes, body: bytes, wait: float) -> tuple[bytes, float]:
    """Send `head` + `body` on a raw socket; read until the server closes (or `wait` passes)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", live.port)) as sock:
        sock.sendall(head + body)
        sock.settimeout(wait)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            pass
    return received, time.monotonic() - started


# -- item 5: a body that never finishes ------------------------------------------------------------
def test_an_unfinished_body_is_answered_408_and_the_connection_closed(live):
    head = (
        b"PUT /v1/notes HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Authorization: Bearer {TOKEN}\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    received, took = raw_request(live, head, b'{"notes":', wait=15)
    assert received.startswith(b"HTTP/1.1 408"), received[:200]
    body = json.loads(received.split(b"\r\n\r\n", 1)[1])
    assert body == {"code": "body_timeout", "message": body["message"], "detail": None}
    assert b"connection: close" in received.lower()
    assert took < 10  # answered after the 1 s limit and closed (no wait for the 15 s read)


def test_a_slow_but_finished_body_and_a_long_stream_are_not_cut(live, client):
    (live.state.index.vault_root / "Slow.md").write_text("# Slow\n\nA sloth moves slowly.\n")

    def slow():  # the whole body inside the limit, in pieces
        yield b'{"notes": [{"path": "Slow.md", '
        time.sleep(0.3)
        yield b'"content": "# Slow\\n\\nA sloth moves slowly.\\n"}]}'

    response = client.put("/v1/notes", content=slow(), headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    # An SSE answer lasts longer than the body limit: its wait for a disconnect is not limited.
    with client.stream("POST", "/v1/ask", json={"question": "sloth"}) as stream:
        time.sleep(1.5)
        events = [e.event for e in read_sse(stream.iter_lines())]
    assert events[-1] == "final", events


# -- item 7: one error shape, finite numbers ------------------------------------------------------
def test_the_host_check_and_the_cors_refusal_use_the_error_body(live):
    host = httpx.get(f"{live.url}/v1/health", headers={"Host": "attacker.example"})
    assert host.status_code == 400
    assert set(host.json()) == ERROR_KEYS and host.json()["code"] == "invalid_host"
    assert httpx.get(f"{live.url}/v1/health", headers={"Host": "localhost:1"}).status_code == 200
    origin = httpx.get(
        f"{live.url}/v1/status", headers={**live.auth, "Origin": "https://evil.example"}
    )
    assert origin.status_code == 403
    assert set(origin.json()) == ERROR_KEYS and origin.json()["code"] == "origin_not_allowed"
    head = b"PUT /v1/notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999\r\n\r\n"
    received, _ = raw_request(live, head, b"", wait=5)
    assert received.startswith(b"HTTP/1.1 413"), received[:200]
    assert set(json.loads(received.split(b"\r\n\r\n", 1)[1])) == ERROR_KEYS


@pytest.mark.parametrize("number", [b"Infinity", b"-Infinity", b"NaN", b"1e400"])
def test_non_finite_numbers_are_422(live, client, number):
    body = (
        b'{"notes": [{"path": "Inf.md", "content": "# Inf\\n\\nx\\n", "mtime": ' + number + b"}]}"
    )
    response = client.put("/v1/notes", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert set(response.json()) == ERROR_KEYS and "mtime" in response.json()["message"]
    assert live.state.index.manifest.note("Inf.md") is None


# -- item 2: turns on one thread ---------------------------------------------------------------
def ask_events(
    live: LiveServer, question: str, thread_id: str | None = None, note: str | None = None
) -> list:
    body: dict = {"question": question, **({"thread_id": thread_id} if thread_id else {})}
    if note:
        body["note"] = {"path": note}
    with live.client() as c, c.stream("POST", "/v1/ask", json=body) as response:
        assert response.status_code == 200
        return list(read_sse(response.iter_lines()))


def test_two_concurrent_asks_on_one_thread_keep_both_turns(live, client):
    first = ask_events(live, "What does BeginPlay do?")
    thread_id = json.loads(first[-1].data)["thread_id"]
    questions = ["How do delegates work?", "What is Lumen?"]
    results: dict[str, list] = {}
    askers = [
        threading.Thread(target=lambda q=q: results.__setitem__(q, ask_events(live, q, thread_id)))
        for q in questions
    ]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join(120)
    finals = [json.loads(results[q][-1].data) for q in questions]
    assert all(results[q][-1].event == "final" for q in questions)
    assert len({f["answer_id"] for f in finals}) == 2

    thread = client.get(f"/v1/threads/{thread_id}").json()
    messages = thread["messages"]
    assert len(messages) == 6, [m["content"][:40] for m in messages]
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[0] == "What does BeginPlay do?" and sorted(users[1:]) == sorted(questions)
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3
    # When the two runs overlap, the later one says it waited ("queued"); on a loaded machine
    # the first can finish before the second arrives, so none waiting is fine, both never.
    queued = [q for q in questions if any('"queued"' in e.data for e in results[q])]
    assert len(queued) <= 1


# -- item 9: answers never fetch remote content ----------------------------------------------------
def test_remote_images_in_an_answer_arrive_as_links(live, client):
    content = (
        "# Quokka\n\nThe quokka smiles on Rottnest island. "
        "![quokka photo](https://evil.example/leak.png?q=secret) "
        '<img src="https://evil.example/pixel.gif" alt="pixel"> Quokkas eat leaves.\n'
    )
    file = live.state.index.vault_root / "Animals" / "Quokka.md"
    file.parent.mkdir(exist_ok=True)
    file.write_text(content, encoding="utf-8")  # a post needs its file, as in Obsidian
    note = {"path": "Animals/Quokka.md", "content": content}
    assert client.put("/v1/notes", json={"notes": [note]}, params={"wait": "true"}).is_success
    # Asked about the note: this module's embeddings are hash noise, so a plain question could
    # rank a noise match above the quokka; what is checked here is how a quote shows images.
    events = ask_events(live, "Where does the quokka smile on Rottnest island?", note=note["path"])
    final = json.loads(events[-1].data)
    streamed = "".join(json.loads(e.data)["text"] for e in events if e.event == "delta")
    assert "evil.example/leak.png" in final["answer"]  # the passage was quoted...
    for text in (final["answer"], streamed):  # ...with its images as plain links
        assert "[quokka photo](https://evil.example/leak.png?q=secret)" in text
        assert "\\![quokka photo]" in text  # the image's `!` escaped: "!" and a link
        assert "<img" not in text


# -- item 1: a stale PUT never beats newer disk content -------------------------------------------
def test_a_stale_put_is_refused_and_the_disk_version_kept(live, client):
    path = live.state.index.vault_root / "Stale" / "Ocelot.md"
    path.parent.mkdir(exist_ok=True)
    v1 = "# Ocelot\n\nThe ocelot hunts at night in the pampas.\n"
    v2 = "# Ocelot\n\nThe ocelot naps in the margay tree by day.\n"
    path.write_text(v1, encoding="utf-8")
    v1_mtime = path.stat().st_mtime_ns / 1e6
    first = {"path": "Stale/Ocelot.md", "content": v1, "mtime": v1_mtime}
    assert client.put("/v1/notes", json={"notes": [first]}).json()["results"][0]["status"] in (
        "indexed",
        "unchanged",
    )
    time.sleep(0.05)
    path.write_text(v2, encoding="utf-8")  # saved again (the watcher is off here)
    v2_hash = hashlib.sha256(v2.encode()).hexdigest()

    for late in (first, {"path": "Stale/Ocelot.md", "content": v1}):  # old mtime, or none
        body = client.put("/v1/notes", json={"notes": [late]}).json()
        result = body["results"][0]
        assert (result["status"], result["current_hash"]) == ("stale", v2_hash), result
        assert body["stale"] == 1 and body["indexed"] == 0
        hits = client.post("/v1/search", json={"query": "ocelot margay pampas"}).json()
        texts = [h["text"] for h in hits["results"] if h["note_path"] == "Stale/Ocelot.md"]
        assert texts and all("margay" in t and "pampas" not in t for t in texts)
        assert client.get("/v1/notes/hashes").json()["hashes"]["Stale/Ocelot.md"] == v2_hash

    newer = {"path": "Stale/Ocelot.md", "content": v2, "mtime": path.stat().st_mtime_ns / 1e6}
    assert client.put("/v1/notes", json={"notes": [newer]}).json()["results"][0]["status"] in (
        "indexed",
        "unchanged",
    )


# -- item 4: a post for a path with no file ------------------------------------------------
def test_a_post_without_a_file_is_refused_and_a_restart_drops_nothing_silently(
    tmp_path, fake, caplog
):
    vault = tmp_path / "vault"
    (vault / "Zoo").mkdir(parents=True)
    (vault / "Zoo" / "Lemur.md").write_text("# Lemur\n\nLemurs live on Madagascar.\n")
    race = vault / "Zoo" / "Race.md"
    race.write_text("# Race\n\nThe first version.\n")
    data = tmp_path / "data"
    settings = server_settings(vault, data, fake, server_watch=False)
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live, live.client() as c:
        wait_idle(live)
        lemur = live.state.index.manifest.note("Zoo/Lemur.md")
        ghost = {"path": "Zoo/Ghost.md", "content": "# Ghost\n\nNo file holds me.\n"}
        edit = {"path": "Zoo/Lemur.md", "content": "# Lemur\n\nA new lemur fact.\n"}
        refused = c.put("/v1/notes", json={"notes": [edit, ghost]})
        assert refused.status_code == 404, refused.text
        body = refused.json()
        assert set(body) == ERROR_KEYS and body["code"] == "no_file"
        assert body["detail"] == {"paths": ["Zoo/Ghost.md"]}
        assert "no file in the sidecar's vault" in body["message"]
        # Nothing of the batch was stored, so a restart has nothing posted to drop.
        assert live.state.index.manifest.note("Zoo/Ghost.md") is None
        assert live.state.index.manifest.note("Zoo/Lemur.md") == lemur
        assert "Zoo/Ghost.md" not in c.get("/v1/notes/hashes").json()["hashes"]
        # A save racing its post (the post is newer than the file): indexed from the post,
        # the file to be read again later.
        newer = race.stat().st_mtime_ns / 1e6 + 5000
        post = {"path": "Zoo/Race.md", "content": "# Race\n\nThe second version.\n", "mtime": newer}
        result = c.put("/v1/notes", json={"notes": [post]}).json()["results"][0]
        assert (result["status"], result["source"]) == ("indexed", "posted")
        assert live.state.index.manifest.note("Zoo/Race.md").file_hash.startswith("posted:")
    race.unlink()  # deleted while the sidecar was down: the vault wins, and the log says so
    caplog.set_level("INFO", logger="vault_rag")
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live, live.client() as c:
        wait_idle(live)
        wait_until(lambda: live.state.writer.status.reconciled, 30)
        last_run = c.get("/v1/status").json()["last_run"]
        assert "deleted 1 (posted with no file 1)" in last_run, last_run
        got = index_snapshot(live.state.index)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("Zoo/Race.md" in w and "posted while no file existed" in w for w in warnings)
    assert any("deleted 1 (posted with no file 1)" in r.getMessage() for r in caplog.records)
    clean = rebuild_snapshot(settings, tmp_path / "clean")
    assert snapshot_diff(got, clean) == {}
