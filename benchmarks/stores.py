"""Search latency and index throughput per vector-store backend (chroma, chroma-http, milvus).

Two workloads, both printed as tables of medians:

* sample: the bundled sample vault embedded once with the configured model (cached in
  `--cache-dir`, re-used by later runs). Each backend is filled by `migrate_index` from the
  manifest's vector cache (write throughput without the model), then every question of
  tests/data/qa/sample.jsonl is searched: the store alone (dense top 50) and the whole hybrid
  search (query embedding + dense + BM25 + fusion).
* synthetic: `--vectors` random unit vectors of the sample index's dimension, upserted in
  batches of 256 (write throughput), then `--queries` store searches, unfiltered and
  restricted to 50 of 500 notes (the folder/tag filter's shape).

chroma-http runs against a `chroma run` server this script starts on a free loopback port;
milvus is Milvus Lite in the data dir (a Milvus server: pass --milvus-uri). The numbers are
wall-clock medians on whatever else the machine is doing: compare backends within one run.

    python -m benchmarks stores [--cache-dir DIR] [--vectors 20000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import QA, TESTS, borrow, median_ms
from vault_rag.index.migrate import migrate_index
from vault_rag.index.stores.factory import open_vector_store
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.serving.sample import sample_vault_path
from vault_rag.settings import Settings

borrow(TESTS)
from store_backends import ChromaServer  # noqa: E402

SAMPLE_QA = QA / "sample.jsonl"
BACKENDS = ("chroma", "chroma-http", "milvus")


def backend_settings(kind: str, args: argparse.Namespace, **values: object) -> Settings:
    extra: dict[str, object] = {"vector_store": kind}
    if kind == "chroma-http":
        extra["chroma_url"] = args.chroma_url
    if kind == "milvus" and args.milvus_uri:
        extra["milvus_uri"] = args.milvus_uri
    return Settings(**values, **extra)


def sample_workload(args: argparse.Namespace, work: Path) -> tuple[list[list[str]], int]:
    vault = sample_vault_path()
    base = args.cache_dir / "sample-chroma"
    settings = Settings(vault=vault, data_dir=base)
    index = open_index(settings)
    make_indexer(settings, index).run()  # embeds once; later runs find everything cached
    chunks = index.manifest.counts()["chunks"]
    questions = [
        json.loads(line)["question"] for line in SAMPLE_QA.read_text().splitlines() if line
    ]
    vectors = [index.provider.embed_query(q) for q in questions]
    provider = index.provider
    dimension = provider.dimension
    index.close()

    rows = []
    for kind in BACKENDS:
        data = work / f"sample-{kind}"
        shutil.copytree(base, data)
        target = backend_settings(kind, args, vault=vault, data_dir=data)
        summary = migrate_index(target, vault, data)
        index = open_index(target, provider=provider)
        index.check_model()
        dense, hybrid = [], []
        for question, vector in zip(questions, vectors, strict=True):
            started = time.perf_counter()
            index.store.search(vector, 50)
            dense.append(time.perf_counter() - started)
            started = time.perf_counter()
            hybrid_search(index, question, SearchOptions(k=10))
            hybrid.append(time.perf_counter() - started)
        index.close()
        rows.append(
            [
                kind,
                str(chunks),
                f"{summary.copied / summary.seconds:.0f}",
                f"{median_ms(dense):.1f}",
                f"{median_ms(hybrid):.1f}",
            ]
        )
    return rows, dimension


def synthetic_workload(args: argparse.Namespace, work: Path, dimension: int) -> list[list[str]]:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(args.vectors, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"c{i:07d}" for i in range(args.vectors)]
    paths = [f"notes/{i % 500:03d}.md" for i in range(args.vectors)]
    metas = [{"note_path": p, "tags": ["bench"], "line_start": 1} for p in paths]
    queries = rng.normal(size=(args.queries, dimension)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    subset = sorted({f"notes/{i:03d}.md" for i in range(0, 500, 10)})  # 50 of 500 notes
    rows = []
    for kind in BACKENDS:
        data = work / f"synthetic-{kind}"
        settings = backend_settings(kind, args, vault=work, data_dir=data)
        store, _ = open_vector_store(settings, work / f"synthetic-vault-{kind}", data, "bench")
        store.reset()
        started = time.perf_counter()
        for start in range(0, args.vectors, 256):
            end = min(start + 256, args.vectors)
            store.upsert(
                ids[start:end], vectors[start:end].tolist(), ["t"] * (end - start), metas[start:end]
            )
        write = args.vectors / (time.perf_counter() - started)
        plain, filtered = [], []
        for query in queries.tolist():
            started = time.perf_counter()
            store.search(query, 50)
            plain.append(time.perf_counter() - started)
            started = time.perf_counter()
            store.search(query, 50, subset)
            filtered.append(time.perf_counter() - started)
        assert store.count() == args.vectors
        store.reset()
        close = getattr(store, "close", None)
        if close is not None:
            close()
        rows.append(
            [
                kind,
                str(args.vectors),
                f"{write:.0f}",
                f"{median_ms(plain):.1f}",
                f"{median_ms(filtered):.1f}",
            ]
        )
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "bench")
    parser.add_argument("--vectors", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--milvus-uri", default=None, help="a Milvus server (default: Lite)")
    args = parser.parse_args(argv)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-stores-") as tmp:
        work = Path(tmp)
        with ChromaServer(work / "chroma-server") as server:
            args.chroma_url = server.url
            sample, dimension = sample_workload(args, work)
            synthetic = synthetic_workload(args, work, dimension)
    print("sample vault (real model vectors from the manifest cache; medians)\n")
    print(
        table(
            ["backend", "chunks", "migrate vectors/s", "dense top-50 ms", "hybrid search ms"],
            sample,
        )
    )
    print(f"\nsynthetic ({args.vectors} random unit vectors, dim {dimension}; medians)\n")
    print(
        table(
            ["backend", "vectors", "upsert vectors/s", "search ms", "search 50/500 notes ms"],
            synthetic,
        )
    )
    return 0
