"""Issue 31 (also fix): Rich read brackets in user-facing text as markup, so a missing extra was
reported as "pip install 'vault-rag'" (`[milvus]` eaten) and a note named `[draft] plan.md`
lost its name in tables, warnings and errors. Real `vault-rag` processes on real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="240")
    env.pop("VAULT_RAG_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "vault_rag", *args], env=env, capture_output=True, text=True
    )


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    (v / "[Secret]").mkdir(parents=True)
    (v / "[Secret]" / "[draft] plan.md").write_text(
        "# [bold]Plan[/bold]\n\nSee ![[Nowhere]] here.\n", encoding="utf-8"
    )
    return v


def test_error_messages_keep_brackets(vault: Path, tmp_path: Path) -> None:
    done = run("feedback", "[b]x", "up", "--vault", str(vault), "--data-dir", str(tmp_path / "d"))
    assert done.returncode != 0
    assert "'[b]x'" in done.stderr, done.stderr


def test_tables_and_warnings_keep_brackets(vault: Path) -> None:
    done = run("chunks", "[Secret]/[draft] plan.md", "--vault", str(vault))
    assert done.returncode == 0, done.stderr
    assert "[Secret]/[draft] plan.md" in done.stdout, done.stdout
    assert "[bold]Plan[/bold]" in done.stdout, done.stdout
    # the missing-embed warning names the note
    assert "[Secret]/[draft] plan.md" in done.stderr and "Nowhere" in done.stderr, done.stderr
