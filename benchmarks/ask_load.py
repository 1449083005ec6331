"""Asks under search load (issue 31, defect 9): do answers wait behind a crowd of searches?

    python -m benchmarks ask_load [--vault V] [--asks 10] [--searches 50] [--embeddings local]

Starts `vault-rag serve` on a copy of the vault (the bundled model by default: query embedding
is the CPU work a search does), indexes it once, then for each search capacity (64: as good as
unbounded, the old behaviour; the default `server_search_concurrency`) runs `--asks` asks at once
alone, then again while `--searches` clients keep searching, and prints the medians and the
ratio loaded / alone. Answers are extractive (no chat model): retrieval is what they share.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.common import ROOT
from benchmarks.procs import QUERIES, Server


def ask_once(server: Server, question: str) -> float:
    started = time.perf_counter()
    with server.client.stream("POST", "/v1/ask", json={"question": question}) as response:
        response.raise_for_status()
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event in ("final", "error"):
                if event == "error":
                    raise RuntimeError(json.loads(line[6:]))
                break
    return time.perf_counter() - started


def asks(server: Server, n: int) -> list[float]:
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda i: ask_once(server, QUERIES[i % len(QUERIES)]), range(n)))


def with_search_load(server: Server, clients: int, n_asks: int) -> tuple[list[float], list[float]]:
    """(ask seconds, search ms) with `clients` searching in a loop until the asks are done."""
    stop = threading.Event()
    searched: list[float] = []

    def keep_searching(i: int) -> None:
        import httpx

        with httpx.Client(
            base_url=str(server.client.base_url), headers=server.client.headers, timeout=600
        ) as client:
            while not stop.is_set():
                started = time.perf_counter()
                client.post("/v1/search", json={"query": QUERIES[i % len(QUERIES)], "k": 10})
                searched.append(1000 * (time.perf_counter() - started))
                i += 1

    threads = [threading.Thread(target=keep_searching, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(3)  # the searches are in flight before the first ask
    try:
        took = asks(server, n_asks)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return took, searched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=ROOT / "sidecar/vault_rag/sample_vault")
    parser.add_argument("--asks", type=int, default=10)
    parser.add_argument("--searches", type=int, default=50)
    parser.add_argument("--embeddings", default="local")
    parser.add_argument(
        "--capacities", default="64,default", help="server_search_concurrency values to compare"
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-ask-load-"))
    vault, data = work / "vault", work / "data"
    shutil.copytree(args.vault, vault)
    rows = []
    try:
        for capacity in args.capacities.split(","):
            env = {"VAULT_RAG_LLM_MODEL": ""}
            if capacity != "default":
                env["VAULT_RAG_SERVER_SEARCH_CONCURRENCY"] = capacity
            server = Server(vault, data, args.embeddings, work, env=env)
            try:
                server.wait_reconciled()
                asks(server, 2)  # warm: model, snapshots
                alone = asks(server, args.asks)
                loaded, searched = with_search_load(server, args.searches, args.asks)
            finally:
                server.stop()
            rows.append((capacity, alone, loaded, searched))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{args.asks} asks at once, alone and with {args.searches} searches in flight "
        f"({args.embeddings} embeddings, extractive answers)\n"
    )
    print(
        "| search capacity | ask p50 alone (s) | ask p50 loaded (s) | loaded / alone "
        "| search p50 loaded (ms) | searches done |"
    )
    print("|---|---|---|---|---|---|")
    for capacity, alone, loaded, searched in rows:
        a, b = statistics.median(alone), statistics.median(loaded)
        name = {"64": "64 (as good as unbounded: before)", "default": "default"}.get(
            capacity, capacity
        )
        print(
            f"| {name} | {a:.2f} | {b:.2f} | {b / a:.1f}x | "
            f"{statistics.median(searched):.0f} | {len(searched)} |"
        )
    return 0
