"""Choosing, switching and losing the vector store: `vault-rag migrate` copies cached vectors
without the model, search refuses a store that does not match the manifest, and a store that
cannot be reached costs dense search only (BM25 serves, nothing is lost, indexing resumes).

Embeddings come from the wire-level fake OpenAI server (fast, deterministic); the stores are
real: embedded Chroma, Milvus Lite in-process and a `chroma run` server on a free port.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.index.migrate import migrate_index
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.vault_index import StoreMismatchError
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.settings import Settings

from fakes.openai_server import FakeOpenAIServer
from store_backends import ChromaServer, free_port

QUERY = "蓝图 调用 C++ 函数 Blueprint"


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAIServer() as server:
        yield server


def settings_for(vault: Path, data: Path, fake: FakeOpenAIServer, **extra: object) -> Settings:
    return Settings(
        vault=vault,
        data_dir=data,
        embeddings="openai",
        embeddings_model="fake-embedding",
        embeddings_base_url=fake.base_url,
        embeddings_api_key="k",
        **extra,
    )


def index_with(settings: Settings):
    index = open_index(settings)
    make_indexer(settings, index).run()
    return index


def ranking(index) -> list[tuple[str, float | None]]:
    return [(r.chunk_id, r.dense_score) for r in hybrid_search(index, QUERY, SearchOptions(k=8))]


def consistent(index) -> None:
    ids = index.manifest.chunk_ids()
    assert index.store.ids() == ids == index.lexical.ids()
    assert index.manifest.counts()["pending"] == 0


@pytest.fixture
def vault(tmp_path, sample_vault) -> Path:
    return shutil.copytree(sample_vault, tmp_path / "vault")


def test_migrate_round_trip_copies_vectors_without_the_model(tmp_path, vault, fake):
    data = tmp_path / "data"
    chroma = settings_for(vault, data, fake)
    index = index_with(chroma)
    before = ranking(index)
    chunks = index.manifest.counts()["chunks"]
    index.close()
    requests = len(fake.embedding_requests)

    with ChromaServer(tmp_path / "chroma-server") as server:
        for kind, extra in (
            ("milvus", {}),
            ("chroma-http", {"chroma_url": server.url}),
            ("chroma", {}),
        ):
            target = settings_for(vault, data, fake, vector_store=kind, **extra)
            summary = migrate_index(target, vault, data)
            assert (summary.copied, summary.pending) == (chunks, 0)
            moved = open_index(target)
            assert (moved.manifest.get_meta("vector_store"), moved.bound_store()) == (
                kind,
                (kind, moved.store_info.collection),
            )
            moved.check_model()
            consistent(moved)
            after = ranking(moved)
            assert [c for c, _ in after] == [c for c, _ in before], kind
            for (_, a), (_, b) in zip(after, before, strict=True):
                assert (a is None) == (b is None) and (a is None or abs(a - b) < 1e-4)
            moved.close()
            if kind == "milvus":
                # The settings still say chroma: search and indexing refuse, naming the fix.
                stale = open_index(chroma)
                with pytest.raises(StoreMismatchError, match="vault-rag migrate --to chroma"):
                    stale.check_model()
                stale.close()
    # The model only embedded the search queries: no document was embedded again.
    later = [text for r in fake.embedding_requests[requests:] for text in r.inputs]
    assert later and all(QUERY in str(text) for text in later)


def test_cli_migrate_and_status_name_the_collection(tmp_path, vault, fake, monkeypatch):
    data = tmp_path / "data"
    index_with(settings_for(vault, data, fake)).close()
    runner = CliRunner()
    common = ["--vault", str(vault), "--data-dir", str(data)]
    status = json.loads(runner.invoke(app, ["status", *common, "--json"]).stdout)
    assert (status["vector_store"], status["collection"]) == ("chroma", "chunks")

    # Its own process, as a user runs it: pymilvus keeps a Milvus Lite file open until the
    # process that opened it exits, and the search below runs in another process.
    env = dict(os.environ) | {
        "VAULT_RAG_EMBEDDINGS": "openai",
        "VAULT_RAG_EMBEDDINGS_MODEL": "fake-embedding",
        "VAULT_RAG_EMBEDDINGS_BASE_URL": fake.base_url,
        "VAULT_RAG_EMBEDDINGS_API_KEY": "k",
        "COLUMNS": "200",
    }
    migrated = subprocess.run(
        [sys.executable, "-m", "vault_rag", "migrate", "--to", "milvus", *common],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert migrated.returncode == 0, migrated.stderr
    assert "copied" in migrated.stdout and "vector_store" in migrated.stdout
    status = json.loads(runner.invoke(app, ["status", *common, "--json"]).stdout)
    assert status["vector_store"] == "milvus"
    assert status["collection"].startswith("vr_vault_")
    assert status["store_location"] == str(data / "milvus.db")
    assert "vault-rag migrate --to chroma" in status["store_mismatch"]  # settings: chroma

    monkeypatch.setenv("VAULT_RAG_VECTOR_STORE", "milvus")
    status = json.loads(runner.invoke(app, ["status", *common, "--json"]).stdout)
    assert "store_mismatch" not in status

    # Another process opens the Milvus Lite collection written there (it starts "released").
    env["VAULT_RAG_VECTOR_STORE"] = "milvus"
    found = subprocess.run(
        [sys.executable, "-m", "vault_rag", "search", QUERY, *common, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["results"]
    assert hits and any(h["dense_score"] is not None for h in hits), found.stderr[-1500:]


def test_unreachable_store_then_back_loses_nothing(tmp_path, vault, fake):
    port = free_port()
    settings = settings_for(
        vault,
        tmp_path / "data",
        fake,
        vector_store="chroma-http",
        chroma_url=f"http://127.0.0.1:{port}",
        embeddings_batch_size=8,
    )
    index = open_index(settings)
    index.store._breaker.retry_after = 0  # type: ignore[attr-defined]  # retry at once here
    with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{port}"):
        make_indexer(settings, index).run()
    counts = index.manifest.counts()
    assert counts["chunks"] > 0 and counts["pending"] == counts["chunks"]
    results = hybrid_search(index, QUERY, SearchOptions(k=5))
    assert results and all(r.dense_score is None for r in results)  # BM25 serves
    assert index.store_error and "cannot be reached" in index.store_error

    requests = len(fake.embedding_requests)
    with ChromaServer(tmp_path / "chroma-server", port=port):
        summary = make_indexer(settings, index).run()
        consistent(index)
        assert summary.notes_reindexed == 0  # chunked once, while the store was down
        assert summary.chunks_embedded + summary.chunks_reused == counts["chunks"]
        # (citing off: it may give the note's slot to a unit that matched only by its words)
        top = hybrid_search(index, QUERY, SearchOptions(cite_spans=False))[:1]
        assert top and all(r.dense_score is not None for r in top)
        assert index.store_error is None
    index.close()
    assert len(fake.embedding_requests) > requests


def test_server_status_reports_an_unreachable_store_and_resumes(tmp_path, vault, fake):
    from test_server_helpers import LiveServer, server_settings, wait_until
    from vault_rag.api.app import create_app

    port = free_port()
    settings = server_settings(
        vault,
        tmp_path / "data",
        fake,
        vector_store="chroma-http",
        chroma_url=f"http://127.0.0.1:{port}",
    )
    with LiveServer(create_app(settings, token="t" * 24), token="t" * 24) as live:
        live.state.index.store._breaker.retry_after = 0.2
        with live.client() as client:

            def status() -> dict:
                return client.get("/v1/status").json()

            first = status()["vector_store"]
            assert first["kind"] == "chroma-http" and first["reachable"] is False
            assert f"127.0.0.1:{port}" in first["error"]
            # BM25 serves meanwhile (once the start-up scan has chunked the vault).
            wait_until(lambda: status()["chunks"] > 0, 60)
            hits = client.post("/v1/search", json={"query": QUERY, "k": 5}).json()["results"]
            assert hits and all(h["dense_score"] is None for h in hits)
            with ChromaServer(tmp_path / "chroma-server", port=port):
                # The writer's back-off retries; every pending chunk reaches the store.
                wait_until(lambda: status()["pending"] == 0, 120, interval=0.5)
                after = client.post("/v1/search", json={"query": QUERY, "k": 5}).json()
                assert any(h["dense_score"] is not None for h in after["results"])
                assert status()["vector_store"]["reachable"] is True
                assert live.state.index.store.count() == status()["chunks"]


def test_settings_refuse_unknown_backends_and_read_the_environment(monkeypatch):
    with pytest.raises(ValueError, match="vector_store"):
        Settings(vector_store="pinecone")  # type: ignore[arg-type]
    monkeypatch.setenv("VAULT_RAG_VECTOR_STORE", "milvus")
    monkeypatch.setenv("VAULT_RAG_MILVUS_URI", "http://milvus.internal:19530")
    monkeypatch.setenv("VAULT_RAG_CHROMA_HEADERS", '{"X-Chroma-Token": "abc"}')
    settings = Settings()
    assert settings.vector_store == "milvus"
    assert settings.milvus_uri == "http://milvus.internal:19530"
    assert settings.chroma_headers == {"X-Chroma-Token": "abc"}
