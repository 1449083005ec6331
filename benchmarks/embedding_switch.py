"""How good the cost estimate of an embedding model switch is (`PUT /v1/settings/embeddings`
without `confirm`): the time the sidecar predicts from 16 units spread over the index
embedded once (their speed in characters a second, scaled to the index's characters;
`services/embedding_choice.estimate_cost`) against the rebuild beside the working index that a
confirmed switch runs (`services/embedding_rebuild.build_beside`), on a copy of the sample
vault first indexed with the hash stand-in.

    python -m benchmarks embedding_switch [--to local] [--repeats 1]

Prints one Markdown table per run and the medians: units, the predicted embedding time, the
measured embedding phase, their ratio, and the whole rebuild (reading, chunking, BM25, Chroma
writes included, which the estimate leaves out and says so).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.common import ROOT


def one_run(to: str, work: Path) -> dict[str, float]:
    from vault_rag.index.vault_index import VaultIndex
    from vault_rag.services.embedding_choice import (
        EmbeddingChoice,
        apply_embedding_choice,
        estimate_cost,
        sample_texts,
        total_chars,
    )
    from vault_rag.services.embedding_rebuild import RebuildStatus, build_beside
    from vault_rag.serving.context import build_provider, make_indexer
    from vault_rag.settings import Settings

    vault, data = work / "vault", work / "data"
    shutil.copytree(ROOT / "sidecar/vault_rag/sample_vault", vault)
    settings = Settings(vault=vault, data_dir=data, embeddings="hash")
    index = VaultIndex(vault, data, build_provider(settings))
    try:
        make_indexer(settings, index).run()
        new = apply_embedding_choice(settings, EmbeddingChoice(to))
        provider = build_provider(new)
        manifest = index.manifest
        texts, chars = sample_texts(manifest), total_chars(manifest)
        cost = estimate_cost(manifest.counts(), provider, texts, None, chars)
    finally:
        index.close()
    if cost.error is not None or cost.seconds is None:
        raise SystemExit(f"the {to} model cannot be used: {cost.error}")
    status = RebuildStatus(state="embedding")
    started = time.monotonic()
    build_beside(new, provider, data, data / "staging", status, threading.Event())
    whole = time.monotonic() - started
    embedding = time.monotonic() - (status._phase_started or started)  # the last phase
    return {
        "units": float(cost.units),
        "estimated": float(cost.seconds or 0),
        "embedding": embedding,
        "whole": whole,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks embedding_switch")
    parser.add_argument("--to", default="local", choices=["local", "hash"])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    runs = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(one_run(args.to, Path(tmp)))
    print(f"switch hash -> {args.to} on the sample vault, {args.repeats} run(s), medians\n")
    print(
        "| units | estimated embedding s | measured embedding s | measured / estimated "
        "| whole rebuild s |"
    )
    print("|---:|---:|---:|---:|---:|")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    ratio = med["embedding"] / med["estimated"] if med["estimated"] else float("nan")
    print(
        f"| {med['units']:.0f} | {med['estimated']:.1f} | {med['embedding']:.1f} | "
        f"{ratio:.2f} | {med['whole']:.1f} |"
    )
    return 0
