"""The plugin's start-up reconcile against a running `vault-rag serve`, for the `whole` benchmark.

Runs `obsidian-plugin/bench/reconcile.ts` (the real sync engine, note source, embed index and
HTTP client, on the vault folder on disk, in Node) against the server: a first start with no
in-sync map (the plugin reads and hashes every note) and a second start with the map the first
one saved (the plugin's data across a restart). Obsidian's `CachedMetadata` for the vault comes
from `scripts/gen_cached_metadata.py`'s parser.

    python -m benchmarks plugin VAULT DATA [--kind hash] [--repeats 3]   # alone: its own server
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, SCRIPTS, borrow
from benchmarks.procs import Server

PLUGIN = ROOT / "obsidian-plugin"


def available() -> str | None:
    """Why the plugin benchmark cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (PLUGIN / "node_modules" / "esbuild").is_dir():
        return "run `npm --prefix obsidian-plugin ci` first"
    return None


def write_metadata(vault: Path, out: Path) -> None:
    borrow(SCRIPTS)
    from gen_cached_metadata import vault_metadata

    data = vault_metadata(vault)
    out.write_text(json.dumps(data, ensure_ascii=False, default=str), encoding="utf-8")


def reconcile(
    server: Server,
    vault: Path,
    metadata: Path,
    known_in: Path | None,
    known_out: Path | None,
    concurrency: int | None = None,
) -> dict[str, Any]:
    cmd = [
        "node",
        str(PLUGIN / "bench" / "run.mjs"),
        "reconcile",
        "--vault",
        str(vault),
        "--metadata",
        str(metadata),
        "--url",
        str(server.client.base_url).rstrip("/"),
        "--token",
        server.token,
    ]
    if known_in is not None:
        cmd += ["--known-in", str(known_in)]
    if known_out is not None:
        cmd += ["--known-out", str(known_out)]
    if concurrency is not None:
        cmd += ["--concurrency", str(concurrency)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, cwd=PLUGIN)
    if done.returncode:
        raise RuntimeError(f"plugin reconcile failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def reconcile_runs(
    server: Server, vault: Path, work: Path, repeats: int, concurrency: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(first starts, second starts), `repeats` of each, against the running server."""
    metadata = work / "cached-metadata.json"
    if not metadata.exists() or metadata.stat().st_mtime < _newest_note(vault):
        write_metadata(vault, metadata)
    known = work / "plugin-known.json"
    first = [reconcile(server, vault, metadata, None, known, concurrency) for _ in range(repeats)]
    second = [reconcile(server, vault, metadata, known, None, concurrency) for _ in range(repeats)]
    return first, second


def _newest_note(vault: Path) -> float:
    return max((p.stat().st_mtime for p in vault.rglob("*.md")), default=0.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("data", type=Path)
    parser.add_argument("--kind", default="hash", help="embedder of the index (hash | local)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--concurrency",
        default="",
        help="reconcileConcurrency values to compare, e.g. 1,8 (default: the engine's)",
    )
    args = parser.parse_args(argv)
    if (why := available()) is not None:
        print(why, file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="vault-rag-plugin-bench-"))
    server = Server(args.vault, args.data, args.kind, work)
    levels = [int(c) for c in args.concurrency.split(",") if c] or [None]
    out: dict[str, Any] = {}
    try:
        server.wait_reconciled()
        for level in levels:
            first, second = reconcile_runs(server, args.vault.resolve(), work, args.repeats, level)
            out[str(level or "default")] = {"first": first, "second": second}
    finally:
        server.stop()
    print(json.dumps(out, indent=1))
    for level, runs in out.items():
        for start in ("first", "second"):
            rs = runs[start]
            wall = sorted(r["wall_ms"] for r in rs)[len(rs) // 2] / 1000
            block = sorted(r["loop_delay_max_ms"] for r in rs)[len(rs) // 2]
            print(
                f"concurrency {level}, {start} start: wall {wall:.2f} s, longest block "
                f"{block:.0f} ms, requests {rs[0]['request_count']}, read {rs[0]['read']}"
            )
    return 0
