"""A `git checkout` that changes 500 notes under a running server: indexed as a few batches,
ending exactly where a clean full index of the same files ends (chunk ids and hashes, notes,
vector store, BM25). Embeddings come from the fake OpenAI server, for speed."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from test_server_helpers import (
    LiveServer,
    index_snapshot,
    rebuild_snapshot,
    server_settings,
    wait_idle,
    wait_until,
)
from vault_rag.api import create_app

from fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

TOKEN = "test-token-0123456789"


def git(vault: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=vault,
        check=True,
        capture_output=True,
    )


def note(i: int, version: str) -> str:
    embed = f"\n![[Gen {i - 1:03}#Details]]\n" if i % 25 == 0 and i else ""
    return (
        f"---\ntags: [gen, v{version}]\n---\n# Gen {i:03}\n\nIntro {version} of note {i}.{embed}\n"
        f"## Details\n\nDetail {version} number {i}: tapir {i * 7 % 13}.\n"
    )


def build_branches(vault: Path) -> None:
    """main: the sample vault + 500 generated notes; `other`: 500 files changed from main
    (300 edited, 100 deleted, 50 renamed into another folder, 50 added)."""
    gen = vault / "Gen"
    gen.mkdir()
    for i in range(500):
        (gen / f"Gen {i:03}.md").write_text(note(i, "1"), encoding="utf-8")
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "main")
    git(vault, "checkout", "-q", "-b", "other")
    for i in range(300):
        (gen / f"Gen {i:03}.md").write_text(note(i, "2"), encoding="utf-8")
    for i in range(300, 400):
        (gen / f"Gen {i:03}.md").unlink()
    (vault / "Archive").mkdir()
    for i in range(400, 450):
        (gen / f"Gen {i:03}.md").rename(vault / "Archive" / f"Gen {i:03}.md")
    for i in range(500, 550):
        (gen / f"Gen {i:03}.md").write_text(note(i, "2"), encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "other")
    git(vault, "checkout", "-q", "main")


def test_git_checkout_of_500_files_is_batched_and_ends_like_a_rebuild(tmp_path, sample_vault):
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault, vault)
    build_branches(vault)
    with FakeOpenAIServer() as fake:
        settings = server_settings(
            vault, tmp_path / "data", fake, watch_debounce=0.5, watch_max_delay=5.0
        )
        with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
            wait_idle(live, 300)
            watcher, writer = live.state.watcher, live.state.writer
            batches, slices = watcher.batches, writer.status.disk_batches
            git(vault, "checkout", "-q", "other")
            wait_until(lambda: watcher.batches > batches, 30)
            time.sleep(1.5)  # any straggling events
            wait_idle(live, 300)
            served = index_snapshot(live.state.index)
            watcher_batches = watcher.batches - batches
            writer_slices = writer.status.disk_batches - slices
        clean = rebuild_snapshot(settings, tmp_path / "clean")

    assert watcher_batches <= 3, watcher_batches  # not one index run per file
    assert writer_slices <= 8, writer_slices  # slices of `index_batch_notes` (200)
    assert served["pending"] == clean["pending"] == 0
    assert served["notes"] == clean["notes"]
    assert served["chunks"] == clean["chunks"]  # same chunk ids and content hashes
    assert served["store"] == clean["store"] == sorted(clean["chunks"])
    assert served["lexical"] == clean["lexical"] == sorted(clean["chunks"])
    assert "Archive/Gen 420.md" in served["notes"] and "Gen/Gen 420.md" not in served["notes"]
