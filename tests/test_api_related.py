"""`GET /v1/related` on a real uvicorn server: notes near a note from its stored vectors.

The embedder is the hash provider (texts sharing words get similar vectors), so which note is
closest is known from the notes' words; a second server whose embedding model is unreachable
holds notes that are indexed but have no vector yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_server_helpers import LiveServer, server_settings, wait_idle
from vault_rag.api import create_app
from vault_rag.retrieval.related import snippet

from fakes.openai_server import FakeOpenAIServer

TOKEN = "test-token-0123456789"
NOTES = {
    "Source.md": "# Lumen\n\nLumen global illumination bounces light between surfaces with "
    "screen traces and signed distance fields.\n\nSee [[Lighting/Linked|the basics]].\n",
    "Close.md": "# Lumen GI\n\nLumen global illumination bounces light between surfaces using "
    "screen traces and **mesh signed distance fields** (see [`r.Lumen` cvars](https://example.com/lumen)).\n",
    "Lighting/Linked.md": "# Light\n\nGlobal illumination: light bounces between surfaces; "
    "tune it per scene.\n",
    "Far.md": "# Cooking\n\nBoil the pasta for ten minutes in salted water, then drain it.\n",
}


def write_vault(root: Path) -> Path:
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


# The module's live server (conftest `live`): this vault, hash embeddings, no watcher.
SERVER_SETTINGS = {"embeddings": "hash", "server_watch": False}
SERVER_VAULT = write_vault


def test_related_notes_best_first_without_the_note_itself(live, client):
    response = client.get("/v1/related", params={"path": "Source.md", "k": 10})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ok" and body["path"] == "Source.md" and body["chunks_used"] >= 1
    paths = [hit["note_path"] for hit in body["related"]]
    assert "Source.md" not in paths
    assert paths[:2] == ["Close.md", "Lighting/Linked.md"]
    assert paths.index("Lighting/Linked.md") < paths.index("Far.md")
    scores = [hit["score"] for hit in body["related"]]
    assert scores == sorted(scores, reverse=True)
    close = body["related"][0]
    assert close["anchor"] == "Lumen GI"
    # the snippet is the text as read, without markdown syntax
    assert "mesh signed distance fields (see r.Lumen cvars)" in close["snippet"]
    assert not {"*", "[", "`", "#"} & set(close["snippet"])
    assert close["line_start"] >= 1 and close["linked"] is False
    assert body["related"][1]["linked"] is True  # [[Lighting/Linked|the basics]]


def test_snippets_read_as_the_note_shows_them():
    text = (
        "## Draw calls\n\n- `stat unit`: **Draw** high → [[Mesh draw calls|too many calls]]\n\n"
        "| cvar | effect |\n|---|---|\n| r.X | y |\n\n> [!tip]- Why\n> see ![[img.png]]\n\n"
        "```cpp\nint x;\n```\n"
    )
    assert snippet(text) == (
        "Draw calls stat unit: Draw high → too many calls cvar effect r.X y Why see img.png int x;"
    )
    assert snippet("word " * 100, limit=20) == "word word word word…"


def test_k_limits_the_list(client):
    response = client.get("/v1/related", params={"path": "Source.md", "k": 1})
    assert [h["note_path"] for h in response.json()["related"]] == ["Close.md"]


def test_a_note_on_disk_but_not_indexed_yet_is_a_status_not_an_error(live, client):
    (live.state.index.vault_root / "New.md").write_text("# New\n\nLumen light.\n", "utf-8")
    response = client.get("/v1/related", params={"path": "New.md"})
    assert response.status_code == 200, response.text
    assert response.json() == {
        "path": "New.md",
        "status": "not_indexed",
        "chunks_used": 0,
        "related": [],
    }


@pytest.mark.parametrize("missing", ["Nowhere.md", "0" * 1000])  # too long for a file name
def test_unknown_note_is_404(client, missing):
    response = client.get("/v1/related", params={"path": missing})
    assert response.status_code == 404, response.text
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("bad", ["../outside.md", "/etc/passwd.md", "a/../../b.md"])
def test_paths_outside_the_vault_are_refused_with_400(client, bad):
    response = client.get("/v1/related", params={"path": bad})
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "unsafe_path"
    assert set(response.json()) == {"code", "message", "detail"}


def test_bad_parameters_are_422(client):
    for params in ({}, {"path": "Source.md", "k": 0}, {"path": "Source.md", "k": "x"}):
        response = client.get("/v1/related", params=params)
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "invalid_request"


def test_needs_the_token(live):
    with live.client() as c:
        response = c.get("/v1/related", params={"path": "Source.md"}, headers={"Authorization": ""})
    assert response.status_code == 401


def test_a_note_without_vectors_yet_is_pending(tmp_path):
    with FakeOpenAIServer() as model:
        vault = write_vault(tmp_path / "vault")
        settings = server_settings(vault, tmp_path / "data", model, server_watch=False)
        with (
            LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as server,
            server.client() as c,
        ):
            wait_idle(server)
            for _ in range(1000):  # the model fails from now on: the posted note keeps no vector
                model.queue_error(503, "model down", endpoint="embeddings")
            content = "# Posted\n\nLumen light bounces.\n"
            (vault / "Posted.md").write_text(content, encoding="utf-8")  # a post needs its file
            note = {"path": "Posted.md", "content": content}
            assert c.put("/v1/notes", json={"notes": [note]}).status_code == 200
            response = c.get("/v1/related", params={"path": "Posted.md"})
            assert server.state.index.manifest.note("Posted.md") is not None
    assert response.status_code == 200, response.text
    assert response.json() == {
        "path": "Posted.md",
        "status": "pending",
        "chunks_used": 0,
        "related": [],
    }
