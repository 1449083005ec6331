"""Issue 31, defect 1: an excluded folder whose name holds glob characters (`[Secret]`) is
excluded like any other, set through the setting or pushed by the plugin, and nothing about an
excluded note is served: search, answers, posts, "ask about this note" and related notes.
Real uvicorn servers on real files, hash embeddings, no chat model (the extractive answer)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from test_server_helpers import LiveServer, read_sse, server_settings, wait_idle
from vault_rag.api import create_app

TOKEN = "test-token-0123456789"
SECRET = "[Secret]/plans.md"
NOTES = {
    SECRET: "# Plans\n\nThe wombat merger closes in March.\n",
    "S/plans.md": "# Other plans\n\nThe garden gets new tulips.\n",
    "Public.md": "# Public\n\nNotes about otters and rivers.\n",
}


def make_vault(root: Path) -> Path:
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    return vault


def hits(client: httpx.Client, query: str) -> set[str]:
    response = client.post("/v1/search", json={"query": query, "k": 10})
    assert response.status_code == 200, response.text
    return {hit["note_path"] for hit in response.json()["results"]}


def ask(live: LiveServer, body: dict) -> tuple[int, str]:
    with (
        httpx.Client(timeout=60) as client,
        client.stream("POST", f"{live.url}/v1/ask", json=body, headers=live.auth) as response,
    ):
        if response.status_code != 200:
            return response.status_code, response.read().decode()
        events = list(read_sse(response.iter_lines()))
    return 200, json.dumps([json.loads(e.data) for e in events], ensure_ascii=False)


def start(tmp_path: Path, fake, **overrides) -> LiveServer:
    settings = server_settings(
        make_vault(tmp_path), tmp_path / "data", fake, embeddings="hash", **overrides
    )
    return LiveServer(create_app(settings, token=TOKEN), token=TOKEN)


def assert_nothing_served(live: LiveServer, client: httpx.Client) -> None:
    manifest = live.state.index.manifest
    assert manifest.note(SECRET) is None
    assert "S/plans.md" in manifest.notes()  # `[Secret]` is not the glob "one of S,e,c,r,t"
    assert SECRET not in hits(client, "wombat merger March")
    status, answer = ask(live, {"question": "when does the wombat merger close?"})
    assert status == 200 and "wombat" not in answer
    # A post of the note is refused, as for any excluded note; nothing is stored.
    note = {"path": SECRET, "content": NOTES[SECRET], "mtime": time.time() * 1000}
    refused = client.put("/v1/notes", json={"notes": [note]})
    assert refused.status_code == 403 and refused.json()["code"] == "excluded"
    assert manifest.note(SECRET) is None


@pytest.mark.parametrize("how", ["setting", "pushed"])
def test_a_folder_named_with_glob_characters_is_excluded(tmp_path, fake, how):
    overrides = {"exclude": ["[Secret]"]} if how == "setting" else {}
    with start(tmp_path, fake, **overrides) as live, live.client() as client:
        wait_idle(live)
        if how == "pushed":
            assert SECRET in live.state.index.manifest.notes()
            pushed = client.put("/v1/settings/exclude", json={"exclude": ["[Secret]"]})
            assert pushed.status_code == 200 and pushed.json()["removed"] == 1, pushed.text
        assert_nothing_served(live, client)


def test_an_excluded_note_is_refused_before_anything_runs_or_is_stored(tmp_path, fake):
    with start(tmp_path, fake, exclude=["[Secret]"]) as live, live.client() as client:
        wait_idle(live)
        body = {
            "question": "summarise the selection",
            "thread_id": "t-private",
            "note": {"path": SECRET, "selection": "The wombat merger closes in March."},
        }
        status, text = ask(live, body)
        assert status == 403 and json.loads(text)["code"] == "excluded"
        # The selection was not stored: no thread was written.
        assert client.get("/v1/threads").json()["threads"] == []
        assert client.get("/v1/threads/t-private").status_code == 404

        # Related notes and the note's status answer alike whether the note exists or not,
        # so they reveal nothing about what an excluded folder holds.
        for path in (SECRET, "[Secret]/no such note.md"):
            related = client.get("/v1/related", params={"path": path})
            assert related.status_code == 403, related.text
            assert related.json() == {
                "code": "excluded",
                "message": "the note is in an excluded folder",
                "detail": {"path": path},
            }
            status_reply = client.get("/v1/status", params={"path": path})
            assert status_reply.status_code == 403
            assert status_reply.json()["detail"] == {"path": path}

        # Asking about a public note that links into the excluded folder: the link is dropped.
        body = {"question": "otters", "note": {"path": "Public.md", "links": [SECRET]}}
        status, text = ask(live, body)
        assert status == 200 and "wombat" not in text
