"""Issue 31, defect 10: damage that went unseen. A manifest truncated to 0 bytes passed
`status` and `doctor` (search found nothing); a page damaged in the middle of the manifest
passed the open-time check and the server answered 500 until `doctor --repair`; `doctor
--repair` left a deleted `chroma/` or `lexical/` for the next index run. Real `vault-rag`
processes and servers on real files; embeddings from the wire-level fake OpenAI server."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from test_serve_faults import Serve, fake_env, run_cli, status_json

from fakes.openai_server import FakeOpenAIServer

QUERY = "BeginPlay"


@pytest.fixture
def indexed(tmp_path, sample_vault):
    """(env, vault, data, fake): the sample vault indexed through the fake's embeddings."""
    with FakeOpenAIServer() as fake:
        vault = tmp_path / "vault"
        shutil.copytree(sample_vault, vault)
        env = fake_env(fake)
        data = tmp_path / "data"
        done = run_cli(env, "index", "--vault", str(vault), "--data-dir", str(data))
        assert done.returncode == 0, done.stderr
        yield env, vault, data, fake


def where(vault: Path, data: Path) -> list[str]:
    return ["--vault", str(vault), "--data-dir", str(data)]


def assert_repaired(env, vault: Path, data: Path, before: dict, fake: FakeOpenAIServer) -> None:
    calls = len(fake.embedding_requests)
    repaired = run_cli(env, "doctor", *where(vault, data), "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "rebuilt from the vault" in repaired.stdout.replace("\n", " ")
    clean = run_cli(env, "doctor", *where(vault, data))
    assert clean.returncode == 0 and "no damage found" in clean.stdout, clean.stdout
    after = status_json(env, vault, data)
    assert (after["notes"], after["chunks"], after["embedded"]) == (
        before["notes"],
        before["chunks"],
        before["embedded"],
    )
    found = run_cli(env, "search", QUERY, *where(vault, data), "--in-process")
    assert found.returncode == 0 and "BeginPlay" in found.stdout, found.stderr
    # The manifest's vector cache refills a lost store: no vector is asked of the model.
    # (A lost manifest is rebuilt from the vault and the store's vectors, by content hash.)
    assert len(fake.embedding_requests) - calls <= 1  # the search's own query


def test_a_manifest_truncated_to_nothing_is_damage(indexed):
    env, vault, data, _fake = indexed
    before = status_json(env, vault, data)
    (data / "manifest.sqlite3").write_bytes(b"")
    for command in (["status"], ["doctor"], ["search", QUERY, "--in-process"]):
        done = run_cli(env, *command, *where(vault, data))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert "empty (truncated to 0 bytes)" in (done.stdout + done.stderr).replace("\n", " ")
        assert "Traceback" not in done.stderr
    assert not list(data.glob("*.damaged-*"))  # they only read
    repaired = run_cli(env, "doctor", *where(vault, data), "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    after = status_json(env, vault, data)
    assert (after["notes"], after["chunks"]) == (before["notes"], before["chunks"])


def damage_a_middle_page(manifest: Path) -> None:
    """Garbage over the `chunks` table's root page: the schema (page 1) reads fine, and so do
    the start-up's id scans (the covering index), but every read of a chunk's data fails."""
    with sqlite3.connect(manifest) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name='chunks'").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    with manifest.open("r+b") as handle:
        handle.seek((root - 1) * size)
        handle.write(b"\xde\xad garbage \xbe\xef" * (size // 16))


def test_a_page_damaged_mid_file_is_named_by_the_server_and_healed_by_a_restart(indexed):
    env, vault, data, _fake = indexed
    before = status_json(env, vault, data)
    damage_a_middle_page(data / "manifest.sqlite3")

    served = Serve(env, vault, data, log_level="warning")
    try:
        served.idle()
        answer = served.client.post("/v1/search", json={"query": QUERY})
        assert answer.status_code == 503, answer.text  # (500 "internal" before)
        body = answer.json()
        assert body["code"] == "index_damaged" and "doctor --repair" in body["message"]
    finally:
        log = served.stop()
    assert "Traceback" not in log

    cli = run_cli(env, "search", QUERY, *where(vault, data), "--in-process")
    assert cli.returncode == 1 and "Traceback" not in cli.stderr, cli.stderr
    assert "damaged" in cli.stderr and "doctor --repair" in cli.stderr
    found = run_cli(env, "doctor", *where(vault, data))
    assert found.returncode == 1 and "integrity check failed" in found.stdout, found.stdout

    # The server saw the damage: its next start checks fully, sets the manifest aside and
    # rebuilds it from the vault.
    served = Serve(env, vault, data, log_level="warning")
    try:
        served.idle()
        hits = served.client.post("/v1/search", json={"query": QUERY})
        assert hits.status_code == 200 and hits.json()["results"], hits.text
        status = served.client.get("/v1/status").json()
        assert (status["notes"], status["chunks"]) == (before["notes"], before["chunks"])
    finally:
        log = served.stop()
    assert list(data.glob("manifest.sqlite3.damaged-*")), log
    assert not (data / "damage.seen").exists()


@pytest.mark.parametrize("lost", ["chroma", "lexical"])
def test_doctor_repair_refills_a_deleted_store(indexed, lost):
    env, vault, data, fake = indexed
    before = status_json(env, vault, data)
    shutil.rmtree(data / lost)
    found = run_cli(env, "doctor", *where(vault, data))
    assert found.returncode == 1, found.stdout + found.stderr
    assert "emptied or deleted" in found.stdout.replace("\n", " ")
    assert_repaired(env, vault, data, before, fake)
    # The sample vault's PDF and canvas are refilled like the notes (issue 25).
    import json

    pdf = run_cli(
        env, "search", "Perforce 独占签出 binary+l", *where(vault, data), "--in-process", "--json"
    )
    assert pdf.returncode == 0, pdf.stderr
    hits = json.loads(pdf.stdout)["results"]
    page = next(h for h in hits if h["note_path"] == "Tools/Perforce Handbook.pdf")
    assert (page["kind"], page["page"]) == ("pdf", 2)
    board = run_cli(
        env, "search", "搁置 变更列表 审查频道", *where(vault, data), "--in-process", "--json"
    )
    assert any(
        h["note_path"] == "Tools/Submit Flow.canvas" for h in json.loads(board.stdout)["results"]
    )
