"""Benchmark search inside one process (no HTTP, no model): where a warm search spends its time.

    python -m benchmarks search VAULT DATA_DIR [--embeddings hash] [--code SIDECAR_DIR]
                                   [--repeats 3] [--profile]

Runs `hybrid_search` over the benchmark's 16 queries (after one warm-up round), `--repeats`
rounds, and prints p50/p95; `--profile` adds the top functions by own time. `--code` imports
another checkout's sidecar (e.g. a frozen copy of main) to compare builds on the same index;
the index is only read (opening it may migrate its files).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

from benchmarks.common import SIDECAR


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("data", type=Path)
    parser.add_argument("--embeddings", default="hash")
    parser.add_argument("--code", type=Path, default=SIDECAR)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.code))
    from benchmarks.procs import QUERIES
    from benchmarks.stats import percentile
    from vault_rag.retrieval.hybrid import hybrid_search, search_options
    from vault_rag.serving.context import open_index
    from vault_rag.settings import load_settings

    settings = load_settings(vault=args.vault, data_dir=args.data, embeddings=args.embeddings)
    index = open_index(settings)
    options = search_options(settings)
    for query in QUERIES:  # warm: snapshots, centroids, caches
        hybrid_search(index, query, options)
    samples = []
    profile = cProfile.Profile() if args.profile else None
    for _ in range(args.repeats):
        for query in QUERIES:
            started = time.perf_counter()
            if profile:
                profile.enable()
            hybrid_search(index, query, options)
            if profile:
                profile.disable()
            samples.append(1000 * (time.perf_counter() - started))
    print(
        f"hybrid_search ({args.code}): p50 {percentile(samples, 50):.1f} ms, "
        f"p95 {percentile(samples, 95):.1f} ms, n {len(samples)}"
    )
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(12)
    index.close()
    return 0
