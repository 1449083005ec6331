"""`kill -9` at random moments during indexing; the next run must end exactly where a clean
full index ends (same chunk ids and hashes in the manifest, the store and the lexical index),
on every vector-store backend: embedded Chroma, a real `chroma run` server and Milvus Lite.

Embeddings come from the wire-level fake OpenAI server (fast, deterministic), so the kills land
in every phase: start-up, scan, chunking, embedding. The ordering under test does not depend on
which model produced the vectors.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vault_rag.embeddings.factory import make_provider

from fakes.openai_server import FakeOpenAIServer
from store_backends import backend_env, open_backend_index

SEEDS = (1, 2, 3, 4, 5)


def run_index(env: dict[str, str], vault: Path, data: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vault_rag",
            "index",
            "--vault",
            str(vault),
            "--data-dir",
            str(data),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finish(env: dict[str, str], vault: Path, data: Path) -> float:
    started = time.monotonic()
    proc = run_index(env, vault, data)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr.decode()
    return time.monotonic() - started


def snapshot(
    server: FakeOpenAIServer, vault: Path, data: Path, backend: tuple[str, str | None]
) -> dict[str, object]:
    provider = make_provider(
        "openai", model="fake-embedding", base_url=server.base_url, api_key="k"
    )
    index = open_backend_index(backend[0], vault, data, provider, backend[1])
    try:
        hashes = index.manifest.chunk_hashes()
        return {
            "manifest": hashes,
            "notes": sorted(index.manifest.notes()),
            "store": sorted(index.store.ids()),
            "lexical": sorted(index.lexical.ids()),
            "pending": index.manifest.counts()["pending"],
        }
    finally:
        index.close()


@pytest.fixture
def env_for(backend):
    def make(server: FakeOpenAIServer) -> dict[str, str]:
        env = dict(os.environ)
        env.update(backend_env(*backend))
        env.update(
            VAULT_RAG_EMBEDDINGS="openai",
            VAULT_RAG_EMBEDDINGS_MODEL="fake-embedding",
            VAULT_RAG_EMBEDDINGS_BASE_URL=server.base_url,
            VAULT_RAG_EMBEDDINGS_API_KEY="k",
            VAULT_RAG_EMBEDDINGS_BATCH_SIZE="2",  # many small store writes: more places to die
        )
        return env

    return make


def test_kill_9_then_resume_equals_clean_index(tmp_path, sample_vault, env_for, backend):
    with FakeOpenAIServer() as server:
        server.delay = 0.02  # stretch the embedding phase so kills land inside it too
        env = env_for(server)
        vault = tmp_path / "vault"
        shutil.copytree(sample_vault, vault)
        clean_seconds = finish(env, vault, tmp_path / "clean")
        clean = snapshot(server, vault, tmp_path / "clean", backend)
        assert clean["pending"] == 0 and clean["manifest"]
        assert clean["store"] == clean["lexical"] == sorted(clean["manifest"])

        for seed in SEEDS:
            rng = random.Random(seed)
            data = tmp_path / f"crash-{seed}"
            kills = 0
            for _ in range(rng.randint(1, 3)):
                proc = run_index(env, vault, data)
                time.sleep(rng.uniform(0.2, clean_seconds))
                if proc.poll() is None:
                    proc.kill()  # SIGKILL: no cleanup handlers run
                    kills += 1
                proc.wait()
            finish(env, vault, data)
            assert snapshot(server, vault, data, backend) == clean, f"seed {seed} ({kills} kills)"


def test_kill_9_during_incremental_run(tmp_path, sample_vault, env_for, backend):
    with FakeOpenAIServer() as server:
        server.delay = 0.02
        env = env_for(server)
        vault = tmp_path / "vault"
        shutil.copytree(sample_vault, vault)
        data = tmp_path / "data"
        finish(env, vault, data)
        # Edit, add, delete and rename notes, then die in the middle of indexing that.
        notes = sorted(p for p in vault.rglob("*.md"))
        notes[0].write_text(notes[0].read_text(encoding="utf-8") + "\n\n追加的段落 appended.\n")
        (vault / "新笔记 New.md").write_text("# 新笔记\n\n一些新的内容 new content.\n")
        notes[1].unlink()
        notes[2].rename(vault / ("moved " + notes[2].name))
        proc = run_index(env, vault, data)
        time.sleep(random.Random(7).uniform(1.0, 3.0))
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        finish(env, vault, data)
        finish(env, vault, tmp_path / "clean")
        assert snapshot(server, vault, data, backend) == snapshot(
            server, vault, tmp_path / "clean", backend
        )
