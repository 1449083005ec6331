"""Cold `vault-rag search` (and the no-op `vault-rag index`) before vs after, in one run.

    python -m benchmarks cold VAULT DATA_DIR [--before REV] [--repeats 7] [--embeddings local]
        [--index] [--serve] [--json OUT]

"Before" is the code of git revision REV (default `main`), unpacked with `git archive` into a
temp dir; "after" is this checkout. Each figure is one whole process (`python -m vault_rag
...`, what the `vault-rag` script runs), wall and CPU time (user + sys, from wait4), median of
--repeats after one warm-up run per row; before and after runs alternate so load on the
machine hits both alike. The rows:

- cold search, no sidecar: both search in-process;
- cold search, sidecar running: a `vault-rag serve` of this checkout runs on DATA_DIR; the
  after code asks it, the before code cannot (it searches in-process);
- with --index: `vault-rag index` with nothing changed (no sidecar running: it would hold the
  writer lock);
- with --serve: `vault-rag serve` with nothing changed, from spawn until `GET /v1/status` says
  the start-up scan is applied and the writer idle (wall only: the server runs on).

DATA_DIR must hold an index of VAULT made with the same embedder (`--embeddings`, default
`local`, the bundled model; `hash` is the stand-in). The settings file is an empty one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, free_port, run_checked, sidecar_env

QUERIES = ["蓝图调用 C++ 函数", "how to spawn an actor at runtime", "材质参数怎么设置"]


def env_for(code: Path, embeddings: str, work: Path) -> dict[str, str]:
    # Bytecode cached as in any installed copy (a checkout run with PYTHONDONTWRITEBYTECODE
    # would compile every module of the package in every process: ~0.6 s CPU here); kept out
    # of the checkout, and written by each row's warm-up run.
    env = sidecar_env(embeddings, work, code=code, COLUMNS="120")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def run_cpu(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    child = run_checked(cmd, env)
    return child.wall, child.cpu


def spawn_server(
    env: dict[str, str], vault: Path, data: Path, log: Path
) -> tuple[subprocess.Popen, int]:
    """`vault-rag serve` of the code `env` points at, on a free port: (process, port)."""
    port = free_port()
    cmd = [sys.executable, "-m", "vault_rag", "serve", "--vault", str(vault)]
    proc = subprocess.Popen(
        [*cmd, "--data-dir", str(data), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        stdin=subprocess.DEVNULL,
    )
    return proc, port


def start_server(env: dict[str, str], vault: Path, data: Path, log: Path) -> subprocess.Popen:
    proc, _port = spawn_server(env, vault, data, log)
    record = data / "server.json"
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"serve exited, see {log}")
        try:
            if json.loads(record.read_text())["pid"] == proc.pid:
                return proc
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    proc.terminate()
    raise SystemExit("serve did not start in 30 min")


def server_start(env: dict[str, str], vault: Path, data: Path, log: Path) -> float:
    """Seconds from spawning `vault-rag serve` until its start-up scan is applied and its
    writer idle (what benchmarks.procs.Server.wait_reconciled measures)."""
    import urllib.request

    from vault_rag.serving.server_token import load_or_create_token

    token = load_or_create_token(data)[0]
    started = time.perf_counter()
    proc, port = spawn_server(env, vault, data, log)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/status", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        while time.perf_counter() - started < 1800:
            if proc.poll() is not None:
                raise SystemExit(f"serve exited, see {log}")
            try:
                with opener.open(request, timeout=5) as response:
                    status = json.loads(response.read())
                writer = status["writer"]
                if (
                    writer["reconciled"]
                    and writer["state"] == "idle"
                    and not writer["queued"]
                    and not status["pending"]
                ):
                    return time.perf_counter() - started
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.02)
        raise SystemExit("serve did not finish its start-up in 30 min")
    finally:
        proc.terminate()
        proc.wait(120)


def unpack(rev: str, into: Path) -> Path:
    """The tree of `rev` (its sidecar/), via git archive: no worktree, no checkout."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "sidecar"], check=True, capture_output=True
    ).stdout
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--before", default="main", help="git revision for 'before'")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--embeddings", default="local")
    parser.add_argument("--index", action="store_true", help="also the no-op `vault-rag index`")
    parser.add_argument("--serve", action="store_true", help="also the server's start-up")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    vault, data = args.vault.resolve(), args.data_dir.resolve()
    if (data / "server.json").exists():
        raise SystemExit(f"{data}/server.json exists: stop the sidecar running on it first")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        work = Path(tmp)
        before_code = unpack(args.before, work / "before")
        envs = {
            "before": env_for(before_code, args.embeddings, work),
            "after": env_for(ROOT, args.embeddings, work),
        }
        where = ["--vault", str(vault), "--data-dir", str(data)]

        def measure(name: str, command: list[str]) -> None:
            runs: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
            for i in range(args.repeats + 1):  # run 0 warms the disk cache, not counted
                for side in ("before", "after"):
                    cmd = [sys.executable, "-m", "vault_rag", *command]
                    if command[0] == "search":
                        cmd.insert(4, QUERIES[i % len(QUERIES)])
                    figure = run_cpu(cmd, envs[side])
                    if i:
                        runs[side].append(figure)
            row = {"figure": name, "n": args.repeats}
            for side in ("before", "after"):
                row[f"{side}_wall"] = statistics.median(w for w, _ in runs[side])
                row[f"{side}_cpu"] = statistics.median(c for _, c in runs[side])
            rows.append(row)
            print(f"{name}: {row}", file=sys.stderr, flush=True)

        search = ["search", *where, "--json"]
        measure("cold `vault-rag search`, no sidecar", search)
        if args.index:
            measure("`vault-rag index`, nothing changed", ["index", *where])
        if args.serve:
            starts: dict[str, list[float]] = {"before": [], "after": []}
            for i in range(args.repeats + 1):
                for side in ("before", "after"):
                    took = server_start(envs[side], vault, data, work / "serve.log")
                    if i:
                        starts[side].append(took)
            row = {"figure": "`vault-rag serve` start-up, nothing changed", "n": args.repeats}
            for side in ("before", "after"):
                row[f"{side}_wall"] = statistics.median(starts[side])
                row[f"{side}_cpu"] = None
            rows.append(row)
            print(f"{row['figure']}: {row}", file=sys.stderr, flush=True)
        server = start_server(envs["after"], vault, data, work / "serve.log")
        try:
            measure("cold `vault-rag search`, sidecar running", search)
        finally:
            server.terminate()
            server.wait(60)
    print(f"\n{args.repeats} runs each, median; before = `{args.before}`, after = this checkout\n")
    print("| figure | before wall | after wall | after/before | before CPU | after CPU |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = r["after_wall"] / r["before_wall"]
        cpu = [f"{r[k]:.2f} s" if r[k] is not None else "–" for k in ("before_cpu", "after_cpu")]
        print(
            f"| {r['figure']} | {r['before_wall']:.2f} s | {r['after_wall']:.2f} s | "
            f"×{ratio:.2f} | {cpu[0]} | {cpu[1]} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0
