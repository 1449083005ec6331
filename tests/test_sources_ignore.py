"""What a code source's walk leaves out, and that it says so: nested `.gitignore` files read as
git reads them (pathspec), Unreal's build folders, and the skips in `vault-rag status` and
`sources list` (a real checkout made by `git init`, real indexes, hash embedder)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.settings import SourceSpec
from vault_rag.source_indexes.specs import path_rules

FILES = {
    ".gitignore": "*.tmp.cpp\nscratch/\n",
    "Source/Game/.gitignore": "Generated/\n*.py\n!tools.py\n",
    "Source/Game/Game.cpp": "int Main() { return 0; }\n",
    "Source/Game/Generated/Gen.cpp": "int Gen() { return 1; }\n",
    "Source/Game/build_helper.py": "def helper():\n    return 1\n",
    "Source/Game/tools.py": "def tool():\n    return 2\n",
    "Source/Game/Deep/.gitignore": "!*.tmp.cpp\n",
    "Source/Game/Deep/kept.tmp.cpp": "int Kept() { return 3; }\n",
    "Source/Other/dropped.tmp.cpp": "int Dropped() { return 4; }\n",
    "scratch/notes.cpp": "int Scratch() { return 5; }\n",
    "Binaries/Win64/Game.cpp": "int Bin() { return 6; }\n",
    "Intermediate/Build/Game.init.gen.cpp": "int Inter() { return 7; }\n",
    "DerivedDataCache/Cache.h": "struct Cache {};\n",
    "Saved/Config/Game.h": "struct Saved {};\n",
    "Plugins/Foo/Binaries/Foo.h": "struct Foo {};\n",
}
KEPT = {
    "Source/Game/Game.cpp",
    "Source/Game/tools.py",
    "Source/Game/Deep/kept.tmp.cpp",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_rules_follow_every_gitignore_like_git(repo: Path):
    skip = path_rules(SourceSpec(name="game", path=repo, kind="code"), repo)
    assert skip("Source/Game/Game.cpp", False) is None
    assert skip("Source/Game/Generated", True) == "ignored by Source/Game/.gitignore"
    assert skip("Source/Game/build_helper.py", False) == "ignored by Source/Game/.gitignore"
    assert skip("Source/Game/tools.py", False) is None  # `!tools.py` brings it back
    # the root's pattern, undone by a deeper `!` for its folder only
    assert skip("Source/Other/dropped.tmp.cpp", False) == "ignored by .gitignore"
    assert skip("Source/Game/Deep/kept.tmp.cpp", False) is None
    assert skip("scratch", True) == "ignored by .gitignore"
    for folder in ("Binaries", "Intermediate", "DerivedDataCache", "Saved", "Plugins/Foo/Binaries"):
        assert "build, vendored or generated" in (skip(folder, True) or ""), folder
    # a .gitignore edited later is read again
    (repo / "Source/Game/.gitignore").write_text("Generated/\n", encoding="utf-8")
    stat = (repo / "Source/Game/.gitignore").stat()
    os.utime(repo / "Source/Game/.gitignore", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert skip("Source/Game/build_helper.py", False) is None


def test_index_and_status_report_what_was_left_out(repo: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nA note.\n", encoding="utf-8")
    runner = CliRunner()

    def cli(*args: str):
        result = runner.invoke(
            app, [*args, "--vault", str(vault), "--data-dir", str(tmp_path / "data")]
        )
        assert result.exit_code == 0, result.output
        return result

    vault_only = json.loads(cli("status", "--json").stdout)
    assert "sources" not in vault_only  # no source: status as before
    cli("sources", "add", "game", str(repo))
    cli("index")
    info = json.loads(cli("status", "--json").stdout)
    game = info["sources"]["game"]
    assert game["notes"] == len(KEPT) and game["problem"] is None
    assert game["warnings_count"] == 0  # left-out files are no warnings
    left_out = {row["path"]: row["why"] for row in game["ignored_files"]}
    build = {"Binaries/", "DerivedDataCache/", "Intermediate/", "Plugins/Foo/Binaries/", "Saved/"}
    assert {p: w for p, w in left_out.items() if p not in build} == {
        "Source/Game/Generated/": "ignored by Source/Game/.gitignore",
        "Source/Game/build_helper.py": "ignored by Source/Game/.gitignore",
        "Source/Other/dropped.tmp.cpp": "ignored by .gitignore",
        "scratch/": "ignored by .gitignore",
    }
    assert all("build, vendored or generated" in left_out[p] for p in build)
    assert game["ignored"] == len(left_out)
    text = cli("status").stdout
    assert "source game (code" in text and "9 left out by its rules" in text
    rows = json.loads(cli("sources", "list", "--json").stdout)
    assert (rows[0]["files"], rows[0]["ignored"], rows[0]["warnings"]) == (3, 9, 0)
