"""`doctor` and `migrate` cover each source beside the vault, not only the vault's own index:
a real `git init` checkout indexed as a code source (hash embedder, embedded Chroma, BM25),
its lexical database damaged on disk, and its vectors moved to Milvus Lite."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.index.manifest import Manifest

runner = CliRunner()
HEADER = """\
/** Counts the lanterns lit along the harbour wall. */
class ULanternCounter
{
public:
    int CountLitLanterns() const { return Lit; }
    int Lit = 0;
};
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Harbour.md").write_text("# Harbour\n\nLanterns line the wall.\n", encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "Source").mkdir(parents=True)
    (repo / "Source" / "LanternCounter.h").write_text(HEADER, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {"vault": vault, "repo": repo, "data": tmp_path / "data"}
    assert cli(env, "sources", "add", "harbour", str(repo)).exit_code == 0
    assert cli(env, "index").exit_code == 0
    return env


def cli(env: dict[str, Path], *args: str):
    return runner.invoke(app, [*args, "--vault", str(env["vault"]), "--data-dir", str(env["data"])])


def test_doctor_finds_and_repairs_a_damaged_source_index(env):
    healthy = cli(env, "doctor")
    assert healthy.exit_code == 0, healthy.output
    assert "source harbour:" in healthy.output and "no damage found" in healthy.output
    folder = env["data"] / "sources" / "harbour"
    with (folder / "lexical" / "lexical.sqlite3").open("r+b") as handle:
        handle.write(b"\xde\xad garbage \xbe\xef" * 256)  # a bad sector's worth
    found = cli(env, "doctor")
    assert found.exit_code == 1, found.output
    after = found.output.split("source harbour:", 1)[1]
    assert "damaged" in after and "lexical" in after
    repaired = cli(env, "doctor", "--repair")
    assert repaired.exit_code == 0, repaired.output
    assert "rebuilt source harbour from its folder" in repaired.output
    assert list((folder).glob("lexical.damaged-*"))  # set aside, never deleted
    clean = cli(env, "doctor")
    assert clean.exit_code == 0 and "damaged" not in clean.output, clean.output
    searched = cli(env, "search", "lit lanterns", "--collection", "harbour", "--in-process")
    assert "ULanternCounter" in searched.output, searched.output


def test_migrate_moves_each_source_index_too(env, monkeypatch):
    moved = cli(env, "migrate", "--to", "milvus")
    assert moved.exit_code == 0, moved.output
    assert "source harbour: copied" in moved.output
    manifest = Manifest(env["data"] / "sources" / "harbour" / "manifest.sqlite3")
    try:
        assert manifest.get_meta("vector_store") == "milvus"
        assert manifest.counts()["pending"] == 0
    finally:
        manifest.close()
    monkeypatch.setenv("VAULT_RAG_VECTOR_STORE", "milvus")
    searched = cli(env, "search", "lit lanterns", "--collection", "harbour", "--in-process")
    assert searched.exit_code == 0 and "ULanternCounter" in searched.output, searched.output
