"""Sources beside the vault, as a user adds and indexes them: a real git checkout made here
(generated files, `git init`), a second real vault, real Chroma and BM25 (hash embedder)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.index.manifest import Manifest

runner = CliRunner()

ACTOR_H = """\
#pragma once
#include "GameFramework/Actor.h"

/** Spawns enemies in waves. */
UCLASS()
class MYGAME_API AWaveSpawner : public AActor
{
    GENERATED_BODY()
public:
    UFUNCTION(BlueprintCallable)
    void StartWave(int32 WaveIndex)
    {
        CurrentWave = WaveIndex;
    }
    int32 CurrentWave = 0;
};
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Waves.md").write_text(
        "# Waves\n\nThe wave spawner starts each wave of enemies.\n", encoding="utf-8"
    )
    repo = tmp_path / "repo"
    files = {
        "Source/MyGame/WaveSpawner.h": ACTOR_H,
        "Source/MyGame/Util.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
        "Binaries/Win64/MyGame.pdb.txt": "build output\n",
        "Intermediate/Build/Gen.h": "struct Generated {};\n",
        "Saved/Logs/log.txt": "log\n",
        "scratch/ignored.cpp": "int ignored() { return 1; }\n",
        ".gitignore": "scratch/\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    (repo / "Source" / "latin.cpp").write_bytes("// caf\xe9\n".encode("latin-1"))
    (repo / "Source" / "bundle.js").write_bytes(b"var a=1;" * 2000)
    (repo / "Source" / "huge.cpp").write_bytes(b"int x;\n" * 200_000)
    os.symlink(repo / "Source", repo / "Source" / "loop")  # a symlink loop inside the tree
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    other = tmp_path / "other-vault"
    other.mkdir()
    (other / "Home.md").write_text("# Home\n\n![[Part]]\n", encoding="utf-8")
    (other / "Part.md").write_text("# Part\n\nPersonal recipes for dumplings.\n", encoding="utf-8")
    return {"vault": vault, "repo": repo, "other": other, "data": tmp_path / "data"}


def _cli(env: dict[str, Path], *args: str):
    result = runner.invoke(
        app, [*args, "--vault", str(env["vault"]), "--data-dir", str(env["data"])]
    )
    return result


def _files(data: Path, name: str) -> set[str]:
    manifest = Manifest(data / "sources" / name / "manifest.sqlite3")
    try:
        return set(manifest.notes())
    finally:
        manifest.close()


def test_add_index_list_and_remove_sources(env):
    assert _cli(env, "sources", "add", "game", str(env["repo"])).exit_code == 0
    added = _cli(env, "sources", "add", "home", str(env["other"]), "--kind", "vault")
    assert added.exit_code == 0, added.output
    result = _cli(env, "index")
    assert result.exit_code == 0, result.output
    assert "source game:" in result.output and "source home:" in result.output
    # the code tree: .gitignore and Unreal's build folders skipped, the loop not followed
    assert _files(env["data"], "game") == {
        "Source/MyGame/WaveSpawner.h",
        "Source/MyGame/Util.py",
        "Source/latin.cpp",
        "Source/bundle.js",
        "Source/huge.cpp",
    }
    # the other vault, its embeds resolved inside it
    assert _files(env["data"], "home") == {"Home.md", "Part.md"}
    # the vault's own index holds its notes only
    vault_manifest = Manifest(env["data"] / "manifest.sqlite3")
    try:
        assert set(vault_manifest.notes()) == {"Notes/Waves.md"}
    finally:
        vault_manifest.close()
    listed = _cli(env, "sources", "list", "--json")
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["game"]["kind"] == "code" and rows["game"]["files"] == 5
    # bad files are reported as warnings (status), not indexed, not fatal
    assert rows["game"]["warnings"] == 3
    assert rows["home"]["problem"] is None
    status = Manifest(env["data"] / "sources" / "game" / "manifest.sqlite3")
    try:
        codes = {w["code"] for w in status.warnings()}
    finally:
        status.close()
    assert codes == {"unknown_encoding", "minified", "too_large"}
    # removing a source removes its data, and only its data
    removed = _cli(env, "sources", "remove", "game")
    assert removed.exit_code == 0, removed.output
    assert not (env["data"] / "sources" / "game").exists()
    assert (env["data"] / "sources" / "home").is_dir()
    assert env["repo"].joinpath("Source/MyGame/WaveSpawner.h").is_file()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing", "does not exist"),
        ("inside", "is inside the vault"),
        ("holds", "holds the vault"),
        ("overlap", "is inside source 'game'"),
        ("file", "is a file, not a folder"),
    ],
)
def test_bad_source_paths_are_clear_errors(env, where: str, message: str):
    assert _cli(env, "sources", "add", "game", str(env["repo"])).exit_code == 0
    path = {
        "missing": env["repo"] / "nope",
        "inside": env["vault"] / "Notes",
        "holds": env["vault"].parent,
        "overlap": env["repo"] / "Source",
        "file": env["repo"] / ".gitignore",
    }[where]
    result = _cli(env, "sources", "add", "bad", str(path))
    assert result.exit_code != 0
    assert message in " ".join(result.output.split()), result.output
    listed = json.loads(_cli(env, "sources", "list", "--json").stdout)
    assert [row["name"] for row in listed] == ["game"]


def test_a_source_that_went_missing_is_reported_and_keeps_its_data(env):
    assert _cli(env, "sources", "add", "game", str(env["repo"])).exit_code == 0
    assert _cli(env, "index").exit_code == 0
    moved = env["repo"].with_name("moved")
    shutil.move(env["repo"], moved)
    result = _cli(env, "index")
    assert result.exit_code == 1
    assert "does not exist" in " ".join(result.output.split())
    assert _files(env["data"], "game")  # nothing lost: it comes back when the path does
    shutil.move(moved, env["repo"])
    assert _cli(env, "index").exit_code == 0


def test_a_source_removed_from_the_settings_loses_its_index(env, tmp_path):
    config = tmp_path / "none.toml"
    config.write_text(
        f'[[sources]]\nname = "docs"\npath = "{env["other"]}"\nkind = "markdown"\n',
        encoding="utf-8",
    )
    assert _cli(env, "index").exit_code == 0
    assert _files(env["data"], "docs") == {"Home.md", "Part.md"}
    refused = _cli(env, "sources", "remove", "docs")
    assert refused.exit_code != 0 and "settings file" in refused.output
    config.write_text("", encoding="utf-8")
    result = _cli(env, "index")
    assert result.exit_code == 0
    assert "no longer declared" in result.output
    assert not (env["data"] / "sources" / "docs").exists()
