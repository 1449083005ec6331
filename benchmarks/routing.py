"""Benchmark what routing costs a search over several collections (issue 43), in one process.

    python -m benchmarks routing VAULT DATA_DIR [--qa FILE.jsonl ...] [--repeats 3]

DATA_DIR must have at least one source beside the vault (`vault-rag sources add`). Every
question (the `--qa` files' questions, default the benchmark's 16 queries) is searched twice in
a row, alternating which goes first: once as the product searches (`search_routed`: each
collection's list, the routing decision, the weighted merge) and once with the same lists
merged rank by rank with no decision (the merge before routing, less its leader check, so the
difference is an upper bound on routing's cost), and a third time routed with the note ↔ code
links attached as `POST /v1/search` does (`source_indexes/pair_links.py`). Prints p50/p95 of
each, the decision's own p50/p95, and the paired differences.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.procs import QUERIES
from benchmarks.stats import percentile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("data", type=Path)
    parser.add_argument("--qa", type=Path, nargs="*", default=[])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from vault_rag.retrieval import collections as merged
    from vault_rag.retrieval.hybrid import hybrid_search, search_options
    from vault_rag.retrieval.routing import merge_weighted
    from vault_rag.serving.context import open_index
    from vault_rag.settings import load_settings
    from vault_rag.source_indexes.collections import open_searched
    from vault_rag.source_indexes.pair_links import link_pairs

    settings = load_settings(vault=args.vault, data_dir=args.data)
    vault_index = open_index(settings)
    indexes = open_searched(settings, vault_index, None)
    if len(indexes) < 2:
        parser.error(f"{args.data} has no source beside the vault: nothing is routed")
    questions = [
        json.loads(line)["question"]
        for file in args.qa
        for line in file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ] or list(QUERIES)
    options = search_options(settings)

    def by_rank(query: str) -> None:
        vector = merged._embed_once(indexes, query, options)
        shared = replace(options, query_vector=vector) if vector is not None else options
        lists = {name: hybrid_search(index, query, shared) for name, index in indexes.items()}
        merge_weighted(lists, {}, options.k)

    decisions: list[float] = []

    def routed(query: str) -> None:
        vector = merged._embed_once(indexes, query, options)
        shared = replace(options, query_vector=vector) if vector is not None else options
        lists = {name: hybrid_search(index, query, shared) for name, index in indexes.items()}
        started = time.perf_counter()
        routing = merged.route(indexes, query, lists, merged._unit(vector))
        decisions.append(1000 * (time.perf_counter() - started))
        merge_weighted(lists, routing.weights(), options.k)

    def linked(query: str) -> None:  # as `POST /v1/search` does: routed, then note ↔ code links
        vector = merged._embed_once(indexes, query, options)
        shared = replace(options, query_vector=vector) if vector is not None else options
        lists = {name: hybrid_search(index, query, shared) for name, index in indexes.items()}
        routing = merged.route(indexes, query, lists, merged._unit(vector))
        results = merge_weighted(lists, routing.weights(), options.k)
        link_pairs(settings, vault_index.data_dir, indexes, results)

    variants = {"rank by rank": by_rank, "routed": routed, "routed + links": linked}
    for query in questions:  # warm: model, snapshots, nulls, symbol names, the graph
        for variant in variants.values():
            variant(query)
    decisions.clear()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(args.repeats):
        for number, query in enumerate(questions):
            names = list(variants) if (round_ + number) % 2 == 0 else list(variants)[::-1]
            for name in names:
                started = time.perf_counter()
                variants[name](query)
                samples[name].append(1000 * (time.perf_counter() - started))
    print(f"{len(questions)} questions × {args.repeats}, collections: {', '.join(indexes)}")
    print("| search | p50 | p95 | n |\n| --- | --- | --- | --- |")
    for name, values in samples.items():
        print(
            f"| {name} | {percentile(values, 50):.1f} ms | {percentile(values, 95):.1f} ms "
            f"| {len(values)} |"
        )
    print(
        f"| the decision alone | {percentile(decisions, 50):.2f} ms "
        f"| {percentile(decisions, 95):.2f} ms | {len(decisions)} |"
    )
    paired = [b - a for a, b in zip(samples["rank by rank"], samples["routed"], strict=True)]
    median = percentile(paired, 50)
    print(f"routed − rank by rank, same question back to back: median {median:+.1f} ms")
    paired = [b - a for a, b in zip(samples["routed"], samples["routed + links"], strict=True)]
    median = percentile(paired, 50)
    print(f"links − routed, same question back to back: median {median:+.1f} ms")
    for index in indexes.values():
        index.close()
    return 0
