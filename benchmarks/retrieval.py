"""Retrieval quality and latency on the sample vault's question set.

Prints hit@1/3/5 (the expected note among the top results) per question kind for dense only,
BM25 only and the hybrid fusion at several RRF constants, plus median query latency with the
dense-only run as the baseline. Indexes the sample vault into a temporary data dir first (or
reuses --data-dir).

    python -m benchmarks retrieval [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

from benchmarks.common import TESTS
from vault_rag.index.updates.indexer import Indexer
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.serving.context import open_index
from vault_rag.serving.sample import sample_vault_path
from vault_rag.settings import load_settings

QUESTIONS = TESTS / "data" / "sample_questions.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-retrieval-"))
    index = open_index(load_settings(vault=sample_vault_path(), data_dir=data_dir))
    Indexer(index).run()
    questions = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    chunks = index.manifest.chunks(index.manifest.chunk_ids())

    def ranked_notes(pairs: list[tuple[str, float]]) -> list[tuple[str, str]]:
        return [(chunks[i].note_path, chunks[i].origin) for i, _ in pairs if i in chunks]

    runs: dict[str, callable] = {
        "dense only": lambda q: ranked_notes(index.store.search(index.provider.embed_query(q), 5)),
        "bm25 only": lambda q: ranked_notes(index.lexical.search(q, 5)),
    }
    for k in (10, 60):
        runs[f"hybrid rrf k={k}"] = lambda q, k=k: [
            (r.note_path, r.origin) for r in hybrid_search(index, q, SearchOptions(k=5, rrf_k=k))
        ]

    print(f"{len(questions)} questions, {len(chunks)} chunks, model {index.model_id}\n")
    header = f"{'run':<18} {'kind':<14} {'n':>3} {'hit@1':>6} {'hit@3':>6} {'hit@5':>6}"
    print(header)
    print("-" * len(header))
    latency: dict[str, float] = {}
    for name, run in runs.items():
        hits: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        times = []
        for q in questions:
            started = time.perf_counter()
            notes = run(q["question"])
            times.append(time.perf_counter() - started)
            for kind in (q["kind"], "all"):
                row = hits[kind]
                row[0] += 1
                for j, n in enumerate((1, 3, 5), start=1):
                    row[j] += any(q["expected_note"] in pair for pair in notes[:n])
        latency[name] = statistics.median(times)
        for kind in ("direct", "paraphrase", "cross-lingual", "all"):
            n, h1, h3, h5 = hits[kind]
            print(f"{name:<18} {kind:<14} {n:>3} {h1:>6} {h3:>6} {h5:>6}")
    base = latency["dense only"]
    print(f"\n{'run':<18} {'median ms':>10} {'vs dense':>9}")
    for name, value in latency.items():
        print(f"{name:<18} {value * 1000:>10.1f} {value / base:>8.2f}x")
    index.close()
    return 0
