"""Every vector-store backend behaves the same with small hand-made vectors: embedded Chroma,
a real `chroma run` server (chroma-http) and Milvus Lite in-process."""

from __future__ import annotations

import math
import uuid
from pathlib import Path

import numpy as np
import pytest

from vault_rag.index.stores import chroma_http
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.stores.chroma import ChromaStore
from vault_rag.index.stores.chroma_http import ChromaHttpStore, parse_chroma_url
from vault_rag.index.stores.milvus import MilvusStore, is_lite_uri
from vault_rag.index.stores.naming import collection_name

from store_backends import BACKENDS, ChromaServer, free_port


@pytest.fixture(scope="module")
def milvus_lite_db(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("milvus") / "milvus.db")


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path: Path):
    name = f"vr_test_{uuid.uuid4().hex[:12]}"
    if request.param == "chroma":
        return ChromaStore(tmp_path / "data", collection=name)
    if request.param == "chroma-http":
        return ChromaHttpStore(request.getfixturevalue("chroma_server").url, name)
    return MilvusStore(request.getfixturevalue("milvus_lite_db"), name)


def unit(*xs: float) -> list[float]:
    norm = math.sqrt(sum(x * x for x in xs))
    return [x / norm for x in xs]


def meta(path: str, **extra: object) -> dict[str, object]:
    return {"note_path": path, "tags": ["a", "b"], "line_start": 1, "anchor": None, **extra}


def fill(store, rows: dict[str, tuple[list[float], str]]) -> None:
    ids = list(rows)
    store.upsert(
        ids,
        [rows[i][0] for i in ids],
        [f"text of {i}" for i in ids],
        [meta(rows[i][1]) for i in ids],
    )


ROWS = {
    "a": (unit(1, 0, 0, 0), "Rendering/材质.md"),
    "b": (unit(1, 1, 0, 0), "Rendering/Lights.md"),
    "c": (unit(0, 1, 0, 0), 'C++/Say "hi".md'),
    "d": (unit(0, 0, 1, 0), "C++/back\\slash.md"),
}


def test_empty_store(store):
    assert store.count() == 0
    assert store.ids() == set()
    assert store.search(unit(1, 0, 0, 0), 5) == []
    store.delete(["nothing"])  # deleting what is not there is fine


def test_search_ranks_by_cosine_similarity(store):
    fill(store, ROWS)
    assert store.count() == 4 and store.ids() == set(ROWS)
    query = unit(2, 1, 0, 0)
    hits = store.search(query, 3)
    assert [h[0] for h in hits] == ["b", "a", "c"]
    for chunk_id, score in hits:
        expected = float(np.dot(query, ROWS[chunk_id][0]))
        assert score == pytest.approx(expected, abs=1e-3)
    assert len(store.search(query, 10)) == 4  # k beyond the count returns everything


def test_upsert_replaces_and_delete_removes(store):
    fill(store, ROWS)
    store.upsert(["a"], [unit(0, 0, 0, 1)], ["new"], [meta("Rendering/材质.md")])
    assert store.count() == 4
    assert store.search(unit(0, 0, 0, 1), 1)[0][0] == "a"
    store.delete(["a", "c", "missing"])
    assert store.ids() == {"b", "d"} and store.count() == 2
    assert {h[0] for h in store.search(unit(1, 0, 0, 0), 5)} == {"b", "d"}


def test_note_path_filter(store):
    fill(store, ROWS)
    query = unit(1, 1, 1, 0)
    assert [h[0] for h in store.search(query, 5, ["Rendering/材质.md"])] == ["a"]
    both = store.search(query, 5, ['C++/Say "hi".md', "C++/back\\slash.md"])
    assert {h[0] for h in both} == {"c", "d"}
    assert store.search(query, 5, []) == []
    assert store.search(query, 5, ["Nowhere.md"]) == []


def test_reset_drops_everything_and_the_dimension(store):
    fill(store, ROWS)
    store.reset()
    assert store.count() == 0 and store.ids() == set()
    store.upsert(["x"], [unit(1, 2, 3, 4, 5, 6)], ["six"], [meta("X.md")])
    assert store.search(unit(1, 2, 3, 4, 5, 6), 2)[0][0] == "x"


def test_many_rows_cross_request_and_page_limits(store, monkeypatch):
    monkeypatch.setattr(chroma_http, "READ_PAGE", 300)  # list ids over several pages
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(1200, 8))
    ids = [f"n{i:04d}" for i in range(1200)]
    store.upsert(
        ids,
        vectors.tolist(),
        ["t"] * len(ids),
        [meta(f"notes/{i % 13}.md") for i in range(len(ids))],
    )
    assert store.count() == 1200 and store.ids() == set(ids)
    store.delete(ids[:700])
    assert store.count() == 500 and store.ids() == set(ids[700:])
    target = vectors[1000] / np.linalg.norm(vectors[1000])
    assert store.search(target.tolist(), 1)[0][0] == "n1000"


def test_chroma_server_down_then_back(tmp_path):
    port = free_port()
    store = ChromaHttpStore(f"http://127.0.0.1:{port}", "vr_down_test", retry_after=0)
    with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{port}.*chroma run"):
        store.count()
    with ChromaServer(tmp_path / "db", port=port):
        fill(store, ROWS)  # reconnects once the server answers
        assert store.count() == 4
    with pytest.raises(StoreUnavailableError, match="cannot be reached"):
        store.upsert(["e"], [unit(1, 0, 0, 1)], ["e"], [meta("E.md")])
    with ChromaServer(tmp_path / "db", port=port):
        assert store.ids() == set(ROWS)  # the server persisted what it had


def test_milvus_server_down_is_a_clear_error():
    store = MilvusStore(f"http://127.0.0.1:{free_port()}", "vr_down_test", token="t", timeout=2)
    with pytest.raises(StoreUnavailableError, match="milvus_uri"):
        store.count()
    with pytest.raises(StoreUnavailableError, match="milvus_uri"):
        store.upsert(["a"], [unit(1, 0)], ["a"], [meta("A.md")])


def test_collection_names_are_per_vault_index_and_model_and_valid_everywhere(tmp_path):
    a, b, data = tmp_path / "Work Notes", tmp_path / "笔记", tmp_path / "data"
    names = {
        collection_name(a, "local:e5", data),
        collection_name(b, "local:e5", data),
        collection_name(a, "openai:text-embedding-3-small", data),
        collection_name(a, "local:e5", tmp_path / "other-data"),
    }
    assert len(names) == 4
    assert collection_name(a, "local:e5", data) == collection_name(a, "local:e5", data)
    assert collection_name(a, "local:e5", data).startswith("vr_work_notes_")
    assert collection_name(b, "local:e5", data).startswith("vr_vault_")
    for name in names:
        assert 3 <= len(name) <= 48
        assert name[0].isalpha() and name[-1].isalnum()
        assert all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in name)


def test_urls():
    assert parse_chroma_url("http://10.0.0.5:9000") == ("10.0.0.5", 9000, False)
    assert parse_chroma_url("https://chroma.example.org") == ("chroma.example.org", 443, True)
    assert parse_chroma_url("localhost") == ("localhost", 8000, False)
    with pytest.raises(ValueError, match="chroma_url"):
        parse_chroma_url("ftp://x")
    assert is_lite_uri("/data/milvus.db") and not is_lite_uri("http://milvus:19530")


@pytest.mark.parametrize("backend", ["chroma", "chroma-http"])
def test_chroma_searches_with_a_wide_hnsw_list_and_raises_older_collections(
    backend: str, request, tmp_path: Path
) -> None:
    """Chroma's default ef_search (100) equals the dense pool and returned a different top 100
    in every process; both Chroma stores search with SEARCH_EF, and a collection made with the
    default (before this) is raised when opened, its vectors kept."""
    from vault_rag.index.stores.chroma import SEARCH_EF

    name = f"vr_test_{uuid.uuid4().hex[:12]}"
    if backend == "chroma":
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        client = chromadb.PersistentClient(
            path=str(tmp_path / "data" / "chroma"),
            settings=ChromaSettings(anonymized_telemetry=False),
        )

        def reopen() -> object:
            return ChromaStore(tmp_path / "data", collection=name)
    else:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        server = request.getfixturevalue("chroma_server")
        host, port, ssl = parse_chroma_url(server.url)
        client = chromadb.HttpClient(
            host=host, port=port, ssl=ssl, settings=ChromaSettings(anonymized_telemetry=False)
        )

        def reopen() -> object:
            return ChromaHttpStore(server.url, name)

    old = client.get_or_create_collection(
        name, metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    assert old.configuration["hnsw"]["ef_search"] < SEARCH_EF  # Chroma's default
    old.add(ids=["a"], embeddings=[unit(1, 0)], metadatas=[{"note_path": "a.md"}])
    store = reopen()
    assert store.search(unit(1, 0), 1)[0][0] == "a"  # opened (and raised) on first use
    raised = client.get_collection(name)
    assert raised.configuration["hnsw"]["ef_search"] == SEARCH_EF
    assert raised.configuration["hnsw"]["space"] == "cosine" and raised.count() == 1
