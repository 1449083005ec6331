"""The server follows each source's folder as it follows the vault: a file written, changed or
deleted under a code source is re-indexed in that source's own index; writes under Unreal's
build folders start no run. Real watchdog observer, real git checkout, real indexes (hash
embedder); the waits poll for the outcome, no timing is asserted."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vault_rag.index.manifest import Manifest
from vault_rag.serving.context import open_index
from vault_rag.settings import Settings, SourceSpec
from vault_rag.source_indexes.service import ServedSources
from vault_rag.source_indexes.specs import save_added

WAIT = 30.0  # seconds before a poll gives up (a loaded machine is slow, never wrong)


def wait_for(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServedSources, Path, Path]]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nA note.\n", encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "Source").mkdir(parents=True)
    (repo / "Source" / "Dock.cpp").write_text("int Moor() { return 1; }\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    data = tmp_path / "data"
    save_added(data, [SourceSpec(name="port", path=repo, kind="code")])
    settings = Settings(
        vault=vault, data_dir=data, embeddings="hash", watch_debounce=0.2, watch_max_delay=1.0
    )
    index = open_index(settings)
    sources = ServedSources(settings, index)
    try:
        sources.watch()
        sources.start_scan()
        assert wait_for(lambda: not sources.scanning and bool(sources.runs))
        yield sources, repo, data / "sources" / "port" / "manifest.sqlite3"
    finally:
        sources.close()
        index.close()


def files(manifest_path: Path) -> set[str]:
    manifest = Manifest(manifest_path)
    try:
        return set(manifest.notes())
    finally:
        manifest.close()


def test_changes_under_a_source_are_indexed_in_its_own_index(served):
    sources, repo, manifest = served
    assert set(sources.watchers) == {"port"}
    assert files(manifest) == {"Source/Dock.cpp"}
    (repo / "Source" / "Crane.cpp").write_text("int Lift() { return 2; }\n", encoding="utf-8")
    assert wait_for(lambda: "Source/Crane.cpp" in files(manifest))
    (repo / "Source" / "Dock.cpp").unlink()
    assert wait_for(lambda: files(manifest) == {"Source/Crane.cpp"})
    # a search opened before the change sees the new state (its index is reopened)
    found = sources.indexes(["port"])["port"]
    assert set(found.manifest.notes()) == {"Source/Crane.cpp"}


def test_build_output_starts_no_index_run(served):
    sources, repo, manifest = served
    watcher = sources.watchers["port"]
    before, batches = sources.reindexed.get("port", 0), watcher.batches
    (repo / "Binaries" / "Win64").mkdir(parents=True)
    (repo / "Binaries" / "Win64" / "Gen.cpp").write_text("int Gen();\n", encoding="utf-8")
    assert wait_for(lambda: watcher.batches > batches)  # the watcher saw it and let it go
    time.sleep(1.0)  # (a run it started would be counted by now; a slow one is only missed)
    assert sources.reindexed.get("port", 0) == before
    assert "Binaries/Win64/Gen.cpp" not in files(manifest)
