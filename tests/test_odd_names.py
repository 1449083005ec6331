"""Issue 31, defect 3: one oddly named file must not stop all indexing. Names that are legal
on Linux (and some on macOS) but have no safe vault-relative form are skipped with an
`unsafe_name` warning; every other note, names legal on every OS included, is indexed, by
`vault-rag index` and by a running server (start-up scan, posts, exclusions, renames, the
watcher). Real files on disk, a real uvicorn server, hash embeddings."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from test_server_helpers import LiveServer, server_settings, wait_idle, wait_until
from vault_rag.api import create_app
from vault_rag.vault.listing import VaultListing

TOKEN = "test-token-0123456789"
# Legal on Linux, no safe vault-relative form: skipped (as bytes: one is not valid UTF-8).
UNSAFE = {
    b"Q: quokkas.md": "Windows drive",
    b"C:x.md": "Windows drive",
    b"..\\x.md": "backslash",
    b"a\\b.md": "backslash",
    b"Folder\\Sub": "backslash",  # a folder: nothing under it is walked
    b"bad \xff name.md": "not valid UTF-8",
}
# Odd but safe, legal on Windows, macOS and Linux alike: indexed.
SAFE = [
    "#1 [draft] 100% ~ & 'quotes' (copy).md",
    "Ünïcödé 中文 😀.md",
    " leading space.md",
    "Sub/Q: a colon below the top.md",  # legal on Linux and macOS; not a drive below the top
    "Sub/[Secret] {x} ^y.md",
]


def write(path: bytes | str, text: str) -> None:
    target = os.fsencode(path)
    os.makedirs(os.path.dirname(target) or b".", exist_ok=True)
    with open(target, "wb") as handle:
        handle.write(text.encode())


def make_vault(root: Path) -> Path:
    vault = root / "vault"
    vault.mkdir(parents=True)
    base = os.fsencode(vault)
    for name in UNSAFE:
        if name.endswith(b".md"):
            write(base + b"/" + name, "# Odd\n\nodd file about lemurs\n")
        else:
            write(base + b"/" + name + b"/inside.md", "# Inside\n\nodd folder about lemurs\n")
    for i, name in enumerate(SAFE):
        write(vault / name, f"# Safe {i}\n\nsafe note number {i} about otters\n")
    write(vault / "Plain.md", "# Plain\n\nA plain note about herons. ![[Ünïcödé 中文 😀]]\n")
    return vault


def test_the_listing_skips_unsafe_names_and_says_why(tmp_path):
    vault = make_vault(tmp_path)
    listing = VaultListing(vault)
    assert listing.paths() == sorted([*SAFE, "Plain.md"])
    assert len(listing.skipped) == len(UNSAFE)
    for name, why in UNSAFE.items():
        shown = name.decode("utf-8", "replace")
        assert listing.skipped[shown].code == "unsafe_name"
        assert why in listing.skipped[shown].why, listing.skipped


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vault_rag", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


def test_vault_rag_index_indexes_everything_else_and_reports_each_skip(tmp_path):
    vault = make_vault(tmp_path)
    data = tmp_path / "data"
    env = {"VAULT_RAG_EMBEDDINGS": "hash", "VAULT_RAG_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "none.toml").write_text("")
    where = ["--vault", str(vault), "--data-dir", str(data)]
    done = run_cli("index", *where, env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Q: quokkas.md" in done.stderr and "rename it to index it" in done.stderr
    status = run_cli("status", *where, "--json", env=env)
    assert status.returncode == 0, status.stderr
    info = json.loads(status.stdout)
    assert info["notes"] == len(SAFE) + 1
    skipped = {w["note"] for w in info["warnings"] if w["code"] == "unsafe_name"}
    assert skipped == {name.decode("utf-8", "replace") for name in UNSAFE}
    # Renamed to a safe name: indexed, and the warning goes.
    os.rename(vault / "Q: quokkas.md", vault / "Quokkas.md")
    assert run_cli("index", *where, env=env).returncode == 0
    info = json.loads(run_cli("status", *where, "--json", env=env).stdout)
    assert info["notes"] == len(SAFE) + 2
    assert "Q: quokkas.md" not in {w["note"] for w in info["warnings"]}


@pytest.fixture
def live(tmp_path, fake):
    settings = server_settings(make_vault(tmp_path), tmp_path / "data", fake, embeddings="hash")
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as server:
        wait_idle(server)
        yield server


def search_paths(client: httpx.Client, query: str) -> set[str]:
    response = client.post("/v1/search", json={"query": query, "k": 20})
    assert response.status_code == 200, response.text
    return {hit["note_path"] for hit in response.json()["results"]}


def test_a_running_server_goes_on_around_odd_names(live):
    vault = live.state.index.vault_root
    manifest = live.state.index.manifest
    with live.client() as client:
        wait_until(lambda: live.state.writer.status.reconciled, 30)
        assert live.state.writer.status.last_error is None
        assert set(manifest.notes()) == {*SAFE, "Plain.md"}
        assert search_paths(client, "otters") >= set(SAFE)
        assert len(manifest.skipped_files()) == len(UNSAFE)

        # A post, an exclusion push and a rename all work (each was a 500 before).
        plain = vault / "Plain.md"
        plain.write_text("# Plain\n\nA plain note about egrets now.\n")
        note = {"path": "Plain.md", "content": plain.read_text(), "mtime": time.time() * 1000}
        posted = client.put("/v1/notes", json={"notes": [note]})
        assert posted.status_code == 200, posted.text
        pushed = client.put("/v1/settings/exclude", json={"exclude": ["Sub"]})
        assert pushed.status_code == 200 and pushed.json()["removed"] == 2, pushed.text
        os.rename(vault / SAFE[0], vault / "Renamed.md")
        renamed = client.post(
            "/v1/notes/rename", json={"renames": [{"old_path": SAFE[0], "new_path": "Renamed.md"}]}
        )
        assert renamed.status_code == 200, renamed.text
        assert renamed.json()["results"][0]["status"] == "renamed"

        # A new odd file seen by the watcher is skipped; a new plain one is indexed.
        write(os.fsencode(vault) + b"/x\\y.md", "# xy\n")
        write(vault / "New.md", "# New\n\nA new note about ibises.\n")
        wait_until(lambda: manifest.note("New.md"), 10)
        wait_idle(live)
        assert "x\\y.md" in manifest.skipped_files()
        assert search_paths(client, "ibises") == {"New.md"}
        assert search_paths(client, "egrets") == {"Plain.md"}
        assert live.state.writer.status.last_error is None


# -- defect 7: a FIFO (or socket, or device) named `.md` -------------------------------------------
def make_special_files(vault: Path) -> list[str]:
    """A FIFO and a Unix socket named like notes (a device needs root: /dev/null's kind is
    the same `not a regular file` case)."""
    os.mkfifo(vault / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(vault / "sock.md"))
    sock.close()
    return ["pipe.md", "sock.md"]


def test_special_files_are_skipped_by_vault_rag_index(tmp_path):
    vault = make_vault(tmp_path)
    special = make_special_files(vault)
    data = tmp_path / "data"
    (tmp_path / "none.toml").write_text("")
    env = {"VAULT_RAG_EMBEDDINGS": "hash", "VAULT_RAG_CONFIG": str(tmp_path / "none.toml")}
    where = ["--vault", str(vault), "--data-dir", str(data)]
    done = run_cli("index", *where, env=env)  # (hung forever on the FIFO before)
    assert done.returncode == 0, done.stderr
    info = json.loads(run_cli("status", *where, "--json", env=env).stdout)
    assert info["notes"] == len(SAFE) + 1
    assert {w["note"] for w in info["warnings"] if w["code"] == "not_regular"} == set(special)


def test_a_post_or_watcher_event_for_a_fifo_never_wedges_the_writer(live):
    vault = live.state.index.vault_root
    manifest = live.state.index.manifest
    with live.client() as client:
        special = make_special_files(vault)
        write(vault / "After.md", "# After\n\nWritten after the FIFO: about storks.\n")
        wait_until(lambda: manifest.note("After.md"), 20)
        for path in special:  # refused like any path without a note file; nothing read
            note = {"path": path, "content": "# x\n", "mtime": time.time() * 1000}
            refused = client.put("/v1/notes", json={"notes": [note]})
            assert refused.status_code == 404 and refused.json()["code"] == "no_file"
        plain = {"path": "Plain.md", "content": "# Plain\n\nkites\n", "mtime": time.time() * 1000}
        assert client.put("/v1/notes", json={"notes": [plain]}).status_code == 200
        wait_idle(live)
        assert set(special) <= set(manifest.skipped_files())
        assert search_paths(client, "storks") == {"After.md"}


def test_read_note_file_never_opens_a_fifo(tmp_path):
    from vault_rag.index.note_file import NotRegularFileError, read_note_file

    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(NotRegularFileError):
        read_note_file(tmp_path, "pipe.md")
    with pytest.raises(NotRegularFileError):
        read_note_file(tmp_path, "pipe.md", walked=True)
