"""Excluded folders are private (issue 13, item 8): the sidecar's `exclude` setting and the
list the plugin pushes (`PUT /v1/settings/exclude`) keep notes out of the start-up scan, the
watcher and `PUT /v1/notes`, and notes already indexed under a newly excluded folder leave the
index. Real uvicorn servers on real files; embeddings from the wire-level fake OpenAI server."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import stat
import time
from pathlib import Path

import httpx
import pytest

from test_server_helpers import LiveServer, server_settings, wait_idle, wait_until
from vault_rag.api import create_app
from vault_rag.settings import Settings
from vault_rag.vault.exclusions import (
    EXCLUDE_FILE,
    ExcludeError,
    ignore_patterns,
    is_excluded,
    normalize_pattern,
    normalize_patterns,
)
from vault_rag.vault.listing import iter_note_paths
from vault_rag.vault.reader import is_ignored

TOKEN = "test-token-0123456789"
NOTE_W = "Public/Welcome.md"
ERROR_KEYS = {"code", "message", "detail"}
NOTES = {
    "Public/Welcome.md": "# Welcome\n\nPublic note about otters.\n\n![[Diary]]\n",
    "Journal/Diary.md": "# Diary\n\nThe narwhal password is zebra42.\n",
    "Journal/Deep/Old.md": "# Old\n\nAn old secret about quokkas.\n",
    "Private/Plan.md": "# Plan\n\nA surprise party for the axolotl.\n",
    # Only the top-level Private folder is excluded: an exclusion is a vault-relative path.
    "Projects/Private/Note.md": "# Note\n\nPelicans are not private.\n",
}


def make_vault(root: Path) -> Path:
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    return vault


def lexical_paths(client: httpx.Client, query: str) -> set[str]:
    response = client.post("/v1/search", json={"query": query, "k": 10})
    assert response.status_code == 200, response.text
    return {hit["note_path"] for hit in response.json()["results"] if hit["lexical_score"]}


def indexed_text(live: LiveServer, path: str) -> str:
    return "\n".join(c.text for c in live.state.index.manifest.note_chunks(path))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def indexed_at(live: LiveServer, path: str) -> float:
    row = live.state.index.manifest.db.execute(
        "SELECT indexed_at FROM notes WHERE path=?", (path,)
    ).fetchone()
    return row[0]


def put_note(client: httpx.Client, vault: Path, rel: str) -> httpx.Response:
    file = vault / rel
    note = {"path": rel, "content": file.read_text(), "mtime": file.stat().st_mtime_ns / 1e6}
    return client.put("/v1/notes", json={"notes": [note]})


# -- matching ------------------------------------------------------------------------------------
# One meaning on both sides: the plugin's vitest suite runs the same cases (tests/exclude.test.ts).
EXCLUDE_CASES = json.loads(
    (Path(__file__).parent.parent / "shared-schemas/fixtures/exclude.json").read_text("utf-8")
)["cases"]


@pytest.mark.parametrize(
    "case", EXCLUDE_CASES, ids=[f"{c['exclude']}:{c['path']}" for c in EXCLUDE_CASES]
)
def test_an_entry_covers_its_literal_path_and_everything_under_it(case):
    ignores = ignore_patterns((), normalize_patterns([case["exclude"]]))
    assert is_excluded(case["path"], ignores) is case["excluded"]
    assert is_ignored(case["path"], ignores) is case["excluded"]


def test_the_listing_applies_the_same_meaning(tmp_path):
    vault = tmp_path / "vault"
    for rel in ("[Secret]/plans.md", "S/plans.md", "a+b/x.md", "aab/x.md", "Top.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text("# x\n")
    ignores = ignore_patterns((), ["[Secret]", "a+b", "Top.md"])
    assert list(iter_note_paths(vault, ignores)) == ["S/plans.md", "aab/x.md"]


def test_entries_are_normalised_and_unsafe_ones_refused():
    assert normalize_pattern(" /Journal\\private/ ") == "Journal/private"
    assert normalize_pattern("./A//B") == "A/B"
    for bad in ("", "/", "../x", "A/../../x", "C:/x"):
        with pytest.raises(ExcludeError):
            normalize_pattern(bad)


def test_the_setting_has_an_environment_override(monkeypatch, tmp_path):
    (tmp_path / "empty.toml").write_text("")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "empty.toml"))
    monkeypatch.setenv("VAULT_RAG_EXCLUDE", '["Private", "*/drafts"]')
    assert Settings().exclude == ["Private", "*/drafts"]
    monkeypatch.delenv("VAULT_RAG_EXCLUDE")
    assert Settings().exclude == []


def test_the_vault_scan_skips_excluded_folders(tmp_path):
    vault = make_vault(tmp_path)
    paths = list(iter_note_paths(vault, (".obsidian", "/Private", "/Journal")))
    assert paths == ["Projects/Private/Note.md", "Public/Welcome.md"]


# -- a running server ------------------------------------------------------------------------------
# The module's live server (conftest `live`): this small vault, its `Private` folder excluded.
SERVER_SETTINGS = {"exclude": ["Private"]}


def SERVER_VAULT(vault: Path) -> None:
    make_vault(vault.parent)


def test_the_start_up_scan_never_reads_an_excluded_folder(live, client):
    notes = live.state.index.manifest.notes()
    assert "Private/Plan.md" not in notes
    assert {"Projects/Private/Note.md", "Journal/Diary.md", "Public/Welcome.md"} <= set(notes)
    assert lexical_paths(client, "axolotl surprise party") == set()
    assert client.get("/v1/settings/exclude").json() == {
        "exclude": [],
        "configured": ["Private"],
        "removed": 0,
        "queued": 0,
    }


def test_a_put_for_an_excluded_note_is_refused_and_nothing_is_stored(live, client):
    vault = live.state.index.vault_root
    manifest = live.state.index.manifest
    stamp = indexed_at(live, NOTE_W)
    welcome = vault / NOTE_W
    batch = [
        {"path": NOTE_W, "content": "# Welcome\n\nChanged.\n", "mtime": time.time() * 1000},
        {"path": "Private/Plan.md", "content": NOTES["Private/Plan.md"], "mtime": None},
    ]
    response = client.put("/v1/notes", json={"notes": batch})
    assert response.status_code == 403, response.text
    body = response.json()
    assert set(body) == ERROR_KEYS and body["code"] == "excluded"
    assert body["detail"] == {"paths": ["Private/Plan.md"]}
    assert manifest.note("Private/Plan.md") is None
    assert "Private/Plan.md" not in client.get("/v1/notes/hashes").json()["hashes"]
    # The whole batch was refused: the other note's post was not applied either.
    assert indexed_at(live, NOTE_W) == stamp
    assert manifest.note(NOTE_W).file_hash == sha(welcome.read_bytes())


def test_the_watcher_ignores_new_files_in_an_excluded_folder(live, client):
    vault = live.state.index.vault_root
    (vault / "Private" / "Capybara.md").write_text("# Capybara\n\nCapybaras like hot springs.\n")
    (vault / "Public" / "Capybara.md").write_text("# Capybara\n\nCapybaras are large rodents.\n")
    manifest = live.state.index.manifest
    wait_until(lambda: manifest.note("Public/Capybara.md"), 10)
    wait_idle(live)
    assert manifest.note("Private/Capybara.md") is None
    assert lexical_paths(client, "capybara") == {"Public/Capybara.md"}


def test_pushing_exclusions_removes_their_notes_at_once_and_clearing_brings_them_back(live, client):
    vault = live.state.index.vault_root
    manifest = live.state.index.manifest
    (vault / NOTE_W).write_text(NOTES[NOTE_W])  # embeds Journal/Diary again
    wait_until(lambda: "narwhal" in indexed_text(live, NOTE_W), 10)
    wait_idle(live)
    assert lexical_paths(client, "narwhal password") == {"Journal/Diary.md", NOTE_W}

    response = client.put("/v1/settings/exclude", json={"exclude": ["Journal/", "Archive\\*"]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["exclude"] == ["Journal", "Archive/*"] and body["configured"] == ["Private"]
    assert body["removed"] == 2
    # Gone before the answer: the notes, their text inlined in the embedder, every search.
    assert not [p for p in manifest.notes() if p.startswith("Journal/")]
    assert "narwhal" not in indexed_text(live, NOTE_W)
    assert lexical_paths(client, "narwhal password quokkas") == set()
    hashes = client.get("/v1/notes/hashes").json()["hashes"]
    assert not [p for p in hashes if p.startswith("Journal/")]
    saved = live.state.index.data_dir / EXCLUDE_FILE
    assert json.loads(saved.read_text()) == {"exclude": ["Journal", "Archive/*"]}
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert client.get("/v1/settings/exclude").json()["exclude"] == ["Journal", "Archive/*"]

    refused = put_note(client, vault, "Journal/Diary.md")
    assert refused.status_code == 403 and refused.json()["code"] == "excluded"
    # The plugin resolves embeds itself: a note embedding an excluded one arrives with its
    # text inlined. The file's own resolution is indexed instead (the embed stays a link).
    welcome = vault / NOTE_W
    inlined = NOTES[NOTE_W].replace("![[Diary]]", NOTES["Journal/Diary.md"])
    post = {
        "path": NOTE_W,
        "content": inlined,
        "embeds": ["Journal/Diary.md"],
        "mtime": welcome.stat().st_mtime_ns / 1e6,
    }
    result = client.put("/v1/notes", json={"notes": [post]}).json()["results"][0]
    assert result["source"] == "disk"
    assert "narwhal" not in indexed_text(live, NOTE_W)
    assert "![[Diary]]" in indexed_text(live, NOTE_W)
    (vault / "Journal" / "New.md").write_text("# New\n\nA new narwhal secret.\n")
    (vault / "Public" / "Marker.md").write_text("# Marker\n\nA heron.\n")
    wait_until(lambda: manifest.note("Public/Marker.md"), 10)
    wait_idle(live)
    assert manifest.note("Journal/New.md") is None

    cleared = client.put("/v1/settings/exclude", json={"exclude": []}).json()
    assert cleared["removed"] == 0 and cleared["queued"] == 3
    wait_idle(live)
    assert {"Journal/Diary.md", "Journal/Deep/Old.md", "Journal/New.md"} <= set(manifest.notes())
    assert "narwhal" in indexed_text(live, NOTE_W)
    assert "Private/Plan.md" not in manifest.notes()  # the configured exclusion still holds


def test_an_exclusion_outside_the_vault_is_422(client):
    response = client.put("/v1/settings/exclude", json={"exclude": ["ok", "../../etc"]})
    assert response.status_code == 422
    assert set(response.json()) == ERROR_KEYS and response.json()["code"] == "invalid_exclude"


# -- across restarts -------------------------------------------------------------------------------
def test_a_newly_excluded_folder_leaves_the_index_at_the_next_start(tmp_path, fake):
    vault = make_vault(tmp_path)
    data = tmp_path / "data"
    first = server_settings(vault, data, fake, server_watch=False)
    with LiveServer(create_app(first, token=TOKEN), token=TOKEN) as live, live.client() as c:
        wait_idle(live)
        assert "Private/Plan.md" in live.state.index.manifest.notes()
        assert c.put("/v1/settings/exclude", json={"exclude": ["Journal"]}).status_code == 200
    # Restarted with `exclude` set in the settings: the plugin's list is still in force, and
    # the start-up reconcile drops what the new setting covers, saying why.
    second = server_settings(vault, data, fake, server_watch=False, exclude=["Private"])
    with LiveServer(create_app(second, token=TOKEN), token=TOKEN) as live, live.client() as c:
        wait_idle(live)
        wait_until(lambda: live.state.writer.status.reconciled, 30)
        notes = live.state.index.manifest.notes()
        assert not [p for p in notes if p.startswith(("Private/", "Journal/"))]
        assert "Projects/Private/Note.md" in notes
        assert lexical_paths(c, "axolotl narwhal quokkas") == set()
        status = c.get("/v1/status").json()
        assert "deleted 1 (excluded 1)" in status["last_run"], status["last_run"]
        assert c.get("/v1/settings/exclude").json()["exclude"] == ["Journal"]


def test_a_damaged_exclusion_file_stops_the_start_instead_of_indexing_private_notes(tmp_path, fake):
    vault = make_vault(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    (data / EXCLUDE_FILE).write_text('{"exclude": ["Jour')
    settings = server_settings(vault, data, fake, server_watch=False)
    server = LiveServer(create_app(settings, token=TOKEN), token=TOKEN)
    with pytest.raises(RuntimeError, match="did not start"), server:
        pass
    manifest = data / "manifest.sqlite3"
    if manifest.exists():  # opened, but nothing was read from the vault
        with sqlite3.connect(manifest) as db:
            assert db.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 0
