"""The HTTP API on a real uvicorn server (loopback, free port): access control, limits,
errors, and the note routes against the sample vault (embeddings from the fake OpenAI server)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import httpx
import pytest

from test_server_helpers import LiveServer, server_settings, wait_idle, wait_until
from vault_rag.api import create_app
from vault_rag.vault.embeds import resolve_note
from vault_rag.vault.frontmatter import split_frontmatter

TOKEN = "test-token-0123456789"
PITFALLS = "踩坑记录 Pitfalls.md"  # a sample note with embeds


# The module's live server (conftest `live`): a small body limit.
SERVER_SETTINGS = {"server_max_body_bytes": 64 * 1024}


def vault_of(live: LiveServer) -> Path:
    return live.state.index.vault_root


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def search_paths(client: httpx.Client, query: str) -> list[str]:
    """Notes among the top 10 that BM25 matched (the fake embeddings rank at random)."""
    response = client.post("/v1/search", json={"query": query, "k": 10})
    assert response.status_code == 200, response.text
    return [hit["note_path"] for hit in response.json()["results"] if hit["lexical_score"]]


def indexed_at(live: LiveServer, path: str) -> float:
    row = live.state.index.manifest.db.execute(
        "SELECT indexed_at FROM notes WHERE path=?", (path,)
    ).fetchone()
    return row[0]


# -- access ------------------------------------------------------------------------------------
PROTECTED = [
    ("GET", "/v1/status", None),
    ("GET", "/v1/notes/hashes", None),
    ("PUT", "/v1/notes", {"notes": [{"path": "a.md", "content": "x", "embeds": []}]}),
    ("DELETE", "/v1/notes", {"paths": ["a.md"]}),
    ("POST", "/v1/notes/rename", {"renames": [{"old_path": "a.md", "new_path": "b.md"}]}),
    ("POST", "/v1/notes/changed", {"paths": ["a.pdf"]}),
    ("POST", "/v1/search", {"query": "x"}),
    ("POST", "/v1/ask", {"question": "x"}),
    ("GET", "/v1/threads", None),
    ("GET", "/v1/threads/abc", None),
]


def test_health_needs_no_token_and_shows_no_secrets(live):
    response = httpx.get(f"{live.url}/v1/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert TOKEN not in response.text and "vault" not in response.text


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_every_other_route_wants_the_token(live, method, path, body):
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": TOKEN}):
        response = httpx.request(method, live.url + path, json=body, headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert response.json()["code"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"


def test_cors_grants_only_the_obsidian_origins(live):
    preflight = {
        "Origin": "app://obsidian.md",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
        "Access-Control-Request-Private-Network": "true",
    }
    ok = httpx.options(f"{live.url}/v1/search", headers=preflight)
    assert ok.status_code == 204
    assert ok.headers["access-control-allow-origin"] == "app://obsidian.md"
    assert ok.headers["access-control-allow-private-network"] == "true"
    assert "authorization" in ok.headers["access-control-allow-headers"]
    for origin in ("capacitor://localhost", "http://localhost"):
        response = httpx.get(f"{live.url}/v1/status", headers={**live.auth, "Origin": origin})
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == origin

    for origin in ("https://evil.example", "http://localhost:3000", "null"):
        denied = httpx.options(f"{live.url}/v1/search", headers={**preflight, "Origin": origin})
        assert denied.status_code == 403
        assert "access-control-allow-origin" not in denied.headers
        assert "access-control-allow-private-network" not in denied.headers
        simple = httpx.get(f"{live.url}/v1/status", headers={**live.auth, "Origin": origin})
        assert simple.status_code == 403 and "access-control-allow-origin" not in simple.headers


def test_only_loopback_host_names(live):
    response = httpx.get(f"{live.url}/v1/health", headers={"Host": "attacker.example"})
    assert response.status_code == 400  # a DNS-rebinding page cannot reach the API


def test_server_listens_on_loopback_only(live):
    assert live.server.servers[0].sockets[0].getsockname()[0] == "127.0.0.1"


# -- request validation --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad", ["../outside.md", "/etc/passwd.md", "C:/Windows/x.md", "a/../../b.md", "a/\x00.md"]
)
def test_traversal_paths_are_refused_with_400(client, bad):
    note = {"path": bad, "content": "# x", "embeds": []}
    attempts = [
        client.put("/v1/notes", json={"notes": [note]}),
        client.put("/v1/notes", json={"notes": [{**note, "path": "ok.md", "embeds": [bad]}]}),
        client.request("DELETE", "/v1/notes", json={"paths": [bad]}),
        client.post("/v1/notes/rename", json={"renames": [{"old_path": "a.md", "new_path": bad}]}),
        client.get("/v1/status", params={"path": bad}),
    ]
    for response in attempts:
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "unsafe_path"


def test_oversize_body_is_refused_with_413(live, client):
    big = "x" * (65 * 1024)
    response = client.put("/v1/notes", json={"notes": [{"path": "big.md", "content": big}]})
    assert response.status_code == 413 and response.json()["code"] == "body_too_large"

    def chunks():  # no Content-Length: the limit is enforced while the body streams
        for _ in range(80):
            yield b"x" * 1024

    streamed = client.put(
        "/v1/notes", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert live.state.index.manifest.note("big.md") is None


def test_malformed_json_is_422_with_a_clear_message(client):
    response = client.put(
        "/v1/notes", content=b'{"notes": [', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "invalid_json"
    assert body["message"].startswith("the request body is not valid JSON")

    missing = client.put("/v1/notes", json={"notes": [{"content": "x"}]})
    assert missing.status_code == 422
    assert missing.json()["code"] == "invalid_request"
    assert "notes.0.path: Field required" in missing.json()["message"]

    surrogate = client.post(
        "/v1/search",
        content=b'{"query": "\\ud800"}',
        headers={"Content-Type": "application/json"},
    )
    assert surrogate.status_code == 422 and "query" in surrogate.json()["message"]
    empty = client.post("/v1/ask", json={"question": ""})
    assert empty.status_code == 422


# -- notes -------------------------------------------------------------------------------------
def test_posted_note_is_searchable_then_unchanged_then_hashed(live, client):
    # On disk the note embeds a note the sidecar cannot resolve; Obsidian posts it resolved,
    # with the file's mtime: the posted text is what gets indexed (whether or not the watcher
    # saw the file first).
    file = vault_of(live) / "Animals" / "Okapi.md"
    file.parent.mkdir(exist_ok=True)
    file.write_text("---\ntags: [zebra]\n---\n# Okapi\n\n![[Okapi habitat]]\n", encoding="utf-8")
    content = "---\ntags: [zebra]\n---\n# Okapi\n\nThe okapi lives in the Ituri rainforest.\n"
    mtime = file.stat().st_mtime_ns / 1e6
    note = {"path": "Animals/Okapi.md", "content": content, "embeds": [], "mtime": mtime}
    first = client.put("/v1/notes", json={"notes": [note]}, params={"wait": "true"})
    assert first.status_code == 200, first.text
    result = first.json()["results"][0]
    assert result["status"] == "indexed" and result["source"] == "posted"
    assert result["chunks"] == 1 and result["embedded"] == 1
    assert "Animals/Okapi.md" in search_paths(client, "okapi Ituri")
    hits = client.post("/v1/search", json={"query": "okapi", "tag": "zebra"}).json()["results"]
    assert hits and hits[0]["dense_score"] is not None  # wait=true: embedded already

    again = client.put("/v1/notes", json={"notes": [note]}).json()
    assert again["results"][0]["status"] == "unchanged" and again["unchanged"] == 1
    assert again["results"][0]["reused"] == 1 and again["embedded"] == 0

    hashes = client.get("/v1/notes/hashes").json()
    assert hashes["algorithm"] == "sha256"
    assert hashes["hashes"]["Animals/Okapi.md"] == sha(content)
    disk_note = vault_of(live) / "C++" / "Subsystems.md"
    assert hashes["hashes"]["C++/Subsystems.md"] == sha(disk_note.read_bytes())

    status = client.get("/v1/status", params={"path": "Animals/Okapi.md"}).json()
    assert status["note"]["indexed"] and status["note"]["chunks"] == 1
    assert status["note"]["content_hash"] == sha(content)
    assert client.get("/v1/status", params={"path": "Nope.md"}).json()["note"]["indexed"] is False


def test_ignored_paths_are_reported_not_indexed(client):
    notes = [
        {"path": ".obsidian/workspace.md", "content": "x"},
        {"path": "image.png", "content": "x"},
    ]
    body = client.put("/v1/notes", json={"notes": notes}).json()
    assert [r["status"] for r in body["results"]] == ["ignored", "ignored"]


def test_post_equal_to_the_disk_uses_its_provenance_and_chunk_ids(live, client):
    vault = vault_of(live)
    manifest = live.state.index.manifest
    before = {c.id: c.content_hash for c in manifest.note_chunks(PITFALLS)}
    raw = (vault / PITFALLS).read_text(encoding="utf-8")
    resolved = resolve_note(vault, PITFALLS)
    head = raw.split("\n")[: resolved.body_start_line - 1]
    content = "\n".join([*head, resolved.text]) if head else resolved.text
    note = {"path": PITFALLS, "content": content, "embeds": resolved.dependencies}
    result = client.put("/v1/notes", json={"notes": [note]}).json()["results"][0]
    assert result["source"] == "disk" and result["status"] == "unchanged"
    assert {c.id: c.content_hash for c in manifest.note_chunks(PITFALLS)} == before
    assert client.get("/v1/notes/hashes").json()["hashes"][PITFALLS] == sha(content)


def test_obsidian_resolution_wins_when_the_file_is_the_one_it_read(live, client):
    vault = vault_of(live)
    path = vault / PITFALLS
    mtime_ms = path.stat().st_mtime_ns / 1e6
    _, body, _, _ = split_frontmatter(path.read_text(encoding="utf-8"))
    content = body + "\n\nObsidian resolved one more line about the capybara.\n"
    note = {"path": PITFALLS, "content": content, "embeds": [], "mtime": mtime_ms}
    result = client.put("/v1/notes", json={"notes": [note]}).json()["results"][0]
    assert result["source"] == "posted" and result["status"] == "indexed"
    record = live.state.index.manifest.note(PITFALLS)
    assert record.file_hash == sha(path.read_bytes())  # the disk's: a disk scan skips it
    assert PITFALLS in search_paths(client, "capybara")


def test_a_save_posted_by_the_plugin_is_not_indexed_again_by_the_watcher(live, client):
    path = vault_of(live) / "Saved" / "Tapir.md"
    path.parent.mkdir(exist_ok=True)
    content = "# Tapir\n\nThe tapir has a short prehensile snout.\n"
    path.write_text(content, encoding="utf-8")
    note = {"path": "Saved/Tapir.md", "content": content, "mtime": path.stat().st_mtime_ns / 1e6}
    result = client.put("/v1/notes", json={"notes": [note]}).json()["results"][0]
    assert (result["status"], result["source"]) == ("indexed", "disk")
    stamp = indexed_at(live, "Saved/Tapir.md")
    batches = live.state.writer.status.disk_batches
    wait_until(lambda: live.state.writer.status.disk_batches > batches, 10)
    wait_idle(live)
    assert indexed_at(live, "Saved/Tapir.md") == stamp  # the watcher's batch skipped it


def test_watcher_first_then_the_post_is_unchanged(live, client):
    path = vault_of(live) / "Saved" / "Pangolin.md"
    path.parent.mkdir(exist_ok=True)
    content = "# Pangolin\n\nPangolins are covered in keratin scales.\n"
    path.write_text(content, encoding="utf-8")
    wait_until(lambda: live.state.index.manifest.note("Saved/Pangolin.md"), 10)
    note = {"path": "Saved/Pangolin.md", "content": content, "mtime": path.stat().st_mtime_ns / 1e6}
    result = client.put("/v1/notes", json={"notes": [note]}).json()["results"][0]
    assert result["status"] == "unchanged" and result["embedded"] == 0


def test_posted_without_a_file_is_refused_then_saved_to_disk_is_indexed(live, client):
    # Issue 13, item 4 (behaviour changed on purpose): a post for a path with no file used to
    # be indexed and then dropped silently at the next start; it is now refused at once.
    content = "# Axolotl\n\n## Habitat\n\nLake Xochimilco.\n\n## Regeneration\n\nLimbs regrow.\n"
    note = {"path": "Later/Axolotl.md", "content": content}
    refused = client.put("/v1/notes", json={"notes": [note]})
    assert refused.status_code == 404, refused.text
    assert refused.json()["code"] == "no_file"
    assert refused.json()["detail"] == {"paths": ["Later/Axolotl.md"]}
    manifest = live.state.index.manifest
    assert manifest.note("Later/Axolotl.md") is None
    assert "Later/Axolotl.md" not in client.get("/v1/notes/hashes").json()["hashes"]
    path = vault_of(live) / "Later" / "Axolotl.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(content, encoding="utf-8")
    wait_until(lambda: manifest.note("Later/Axolotl.md"), 10)
    wait_idle(live)
    ids = {c.id: c.content_hash for c in manifest.note_chunks("Later/Axolotl.md")}
    note["mtime"] = path.stat().st_mtime_ns / 1e6
    again = client.put("/v1/notes", json={"notes": [note]}).json()["results"][0]
    assert again["status"] == "unchanged" and again["source"] == "disk"
    assert {c.id: c.content_hash for c in manifest.note_chunks("Later/Axolotl.md")} == ids


def test_delete_and_rename(live, client):
    vault = vault_of(live)
    (vault / "Moves").mkdir(exist_ok=True)
    source = vault / "Moves" / "Narwhal.md"
    source.write_text("# Narwhal\n\nThe narwhal tusk is a tooth.\n", encoding="utf-8")
    client.put(
        "/v1/notes",
        json={"notes": [{"path": "Moves/Narwhal.md", "content": source.read_text()}]},
        params={"wait": "true"},
    )
    (vault / "Moved").mkdir(exist_ok=True)
    source.rename(vault / "Moved" / "Narwhal.md")  # a folder move: same title, same vectors
    renamed = client.post(
        "/v1/notes/rename",
        json={"renames": [{"old_path": "Moves/Narwhal.md", "new_path": "Moved/Narwhal.md"}]},
    ).json()
    assert renamed["results"][0]["status"] == "renamed"
    assert renamed["results"][0]["embedded"] == 0 and renamed["results"][0]["reused"] == 1
    assert "Moved/Narwhal.md" in search_paths(client, "narwhal tusk")
    assert live.state.index.manifest.note("Moves/Narwhal.md") is None

    (vault / "Moved" / "Narwhal.md").unlink()
    deleted = client.request(
        "DELETE", "/v1/notes", json={"paths": ["Moved/Narwhal.md", "Never/There.md"]}
    ).json()
    # The watcher may see the unlink first (a loaded machine): then the note is already gone
    # and the post finds nothing to delete. Either way it is out of the index.
    statuses = [r["status"] for r in deleted["results"]]
    assert statuses[0] in ("deleted", "not_found") and statuses[1] == "not_found", statuses
    assert live.state.index.manifest.note("Moved/Narwhal.md") is None
    assert "Moved/Narwhal.md" not in search_paths(client, "narwhal tusk")
    missing = client.post(
        "/v1/notes/rename",
        json={"renames": [{"old_path": "x.md", "new_path": "Nowhere/y.md"}]},
    ).json()
    assert missing["results"][0]["status"] == "missing"


def test_search_answers_while_a_batch_is_written(live, client, fake):
    fake.delay = 0.05  # slow embedding: the writer stays busy
    try:
        bulk = vault_of(live) / "Bulk"
        bulk.mkdir(exist_ok=True)
        notes = []
        for i in range(60):  # each post has its file, as in Obsidian
            content = f"# Bulk {i}\n\nfiller text number {i}.\n"
            (bulk / f"Note {i}.md").write_text(content, encoding="utf-8")
            notes.append({"path": f"Bulk/Note {i}.md", "content": content})
        with live.client() as writer_client:
            started = time.monotonic()
            response = writer_client.put("/v1/notes", json={"notes": notes})
            assert response.status_code == 200
            assert live.state.index.manifest.counts()["pending"] > 0
            query_started = time.monotonic()
            assert search_paths(client, "filler text number 7")  # BM25 has them already
            assert time.monotonic() - query_started < 5
            assert time.monotonic() - started < 60
    finally:
        fake.delay = 0.0
        wait_idle(live)


def test_a_second_server_on_the_same_index_is_refused(live, fake):
    settings = server_settings(
        live.state.index.vault_root, live.state.index.data_dir, fake, server_watch=False
    )
    other = LiveServer(create_app(settings, token=TOKEN))
    with pytest.raises(RuntimeError):
        other.__enter__()
    other.server.should_exit = True
    other.sock.close()
