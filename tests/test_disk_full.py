"""Issue 31, defect 2: a full disk (or a read-only one) is not damage. On a real tmpfs of a few
megabytes, filled to the last byte: `vault-rag serve`, `search` and `index` say "disk full" (or
"read-only") with exit code 5 and no traceback, move and delete nothing, however often they are
started; when space returns, the conversations and ratings are still there and nothing is
embedded again. Needs root to mount the tmpfs (as CI runs); skipped with the reason otherwise."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_rag.serving.sample import sample_vault_path
from vault_rag.storage.disk_faults import EXIT_CODE, disk_fault

QUESTION = "UFUNCTION BlueprintCallable: how to call C++ functions from Blueprint"


def mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill (needs root): {done.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs to fill needs root and `mount`")
    disk = tmp_path / "disk"
    mount_tmpfs(disk, "48m")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vault_rag", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def fill(disk: Path) -> None:
    """Write until the file system refuses: not one byte is left."""
    with (disk / "filler").open("wb") as handle:
        try:
            while True:
                handle.write(b"\0" * (1 << 20))
                handle.flush()
        except OSError:
            pass
    with (disk / "filler-small").open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 512)
        except OSError:
            pass


def files(data: Path) -> dict[str, str]:
    """Every file in the data dir and its sha256, but for what a start writes anyway: SQLite's
    -shm/-wal side files (opening a database creates them) and the writer lock's pid."""
    found = {}
    for path in sorted(data.rglob("*")):
        if path.is_file() and not path.name.endswith(("-shm", "-wal", "writer.pid")):
            found[str(path.relative_to(data))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def setup(small_disk: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A vault, and its index on the small disk with a conversation and a rating in it."""
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_path(), vault)
    data = small_disk / "data"
    (tmp_path / "empty.toml").write_text("")
    env = {
        **os.environ,
        "VAULT_RAG_EMBEDDINGS": "hash",
        "VAULT_RAG_CONFIG": str(tmp_path / "empty.toml"),
        "VAULT_RAG_VAULT": str(vault),
        "VAULT_RAG_DATA_DIR": str(data),
    }
    asked = cli("ask", QUESTION, "--thread", "t1", "--json", env=env)
    assert asked.returncode == 0, asked.stderr
    answer_id = json.loads(asked.stdout)["answer_id"]
    rated = cli("feedback", answer_id, "up", env=env)
    assert rated.returncode == 0, rated.stderr
    return data, vault, env


def assert_refused(done: subprocess.CompletedProcess[str], what: str) -> None:
    assert done.returncode == EXIT_CODE, (done.returncode, done.stderr)
    assert what in done.stderr, done.stderr
    assert "nothing was moved or deleted" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_a_full_disk_is_said_and_nothing_is_moved_or_lost(setup, small_disk):
    data, _vault, env = setup
    fill(small_disk)
    before = files(data)
    for _ in range(2):  # every failed start leaves the data dir as it was
        serve = cli("serve", "--port", str(free_port()), env=env, timeout=120)
        assert_refused(serve, "disk full")
        assert files(data) == before
    assert_refused(cli("search", QUESTION, env=env), "disk full")
    assert_refused(cli("search", QUESTION, "--in-process", env=env), "disk full")
    assert_refused(cli("index", env=env), "disk full")
    assert files(data) == before
    assert not [p for p in data.iterdir() if ".damaged-" in p.name]

    # Space returns: the same conversation, the same rating, nothing embedded again.
    (small_disk / "filler").unlink()
    again = cli("index", env=env)
    assert again.returncode == 0, again.stderr
    assert "chunks embedded 0 / reused 0" in again.stdout, again.stdout
    with sqlite3.connect(data / "threads.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id='t1'").fetchone()[0]
    with sqlite3.connect(data / "feedback.sqlite3") as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert sum(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables) >= 2
    found = cli("search", QUESTION, "--json", env=env)
    assert found.returncode == 0 and "Blueprint" in found.stdout, found.stderr


def test_a_read_only_disk_is_said_and_nothing_is_moved(setup, small_disk):
    data, _vault, env = setup
    before = files(data)
    remount = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True)
    assert remount.returncode == 0, remount.stderr
    try:
        assert_refused(cli("serve", "--port", str(free_port()), env=env, timeout=120), "read-only")
        assert_refused(cli("index", env=env), "read-only")
        assert files(data) == before
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)


def test_sqlite_s_own_full_disk_error_is_a_disk_fault_and_damage_is_not(small_disk):
    fill(small_disk)
    (small_disk / "filler").unlink()  # room for the database file, not for the rows
    db = sqlite3.connect(small_disk / "x.sqlite3")
    db.execute("CREATE TABLE t (v BLOB)")
    fill(small_disk)
    with pytest.raises(sqlite3.Error) as raised:
        db.execute("INSERT INTO t VALUES (?)", (os.urandom(4 << 20),))
        db.commit()
    fault = disk_fault(raised.value, small_disk)
    assert fault is not None and fault.kind == "disk_full", raised.value
    db.close()
    damaged = small_disk.parent / "damaged.sqlite3"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
    with pytest.raises(sqlite3.DatabaseError) as corrupt:
        sqlite3.connect(damaged).execute("SELECT * FROM sqlite_master").fetchall()
    assert disk_fault(corrupt.value, damaged.parent) is None


def test_a_token_that_cannot_be_written_leaves_no_empty_file(small_disk, tmp_path):
    """The old token file was created first and written after: a full disk left it empty, and
    every later start failed with a traceback."""
    from vault_rag.serving.server_token import TOKEN_FILE

    data = small_disk / "data"
    data.mkdir()
    fill(small_disk)
    (tmp_path / "empty.toml").write_text("")
    env = {**os.environ, "VAULT_RAG_CONFIG": str(tmp_path / "empty.toml")}
    done = cli("token", "--vault", str(tmp_path), "--data-dir", str(data), env=env)
    assert_refused(done, "disk full")
    assert not (data / TOKEN_FILE).exists()
    assert list(data.iterdir()) == []


def test_a_damaged_token_file_is_a_message_not_a_traceback(tmp_path):
    from vault_rag.serving.server_token import TOKEN_FILE

    data = tmp_path / "data"
    data.mkdir()
    (data / TOKEN_FILE).write_bytes(b"")
    (tmp_path / "empty.toml").write_text("")
    env = {**os.environ, "VAULT_RAG_CONFIG": str(tmp_path / "empty.toml")}
    for command in (["token"], ["serve", "--port", str(free_port())]):
        done = cli(*command, "--vault", str(tmp_path), "--data-dir", str(data), env=env)
        assert done.returncode == 1, done.stderr
        assert "empty or damaged; delete it" in done.stderr
        assert "Traceback" not in done.stderr
