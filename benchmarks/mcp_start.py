"""Start-up of `vault-rag mcp` over stdio: the time from starting the process to the first
`tools/list` answer (the SDK's client: `server/discover`, then `tools/list`), and to the first
`search_notes` answer, with a sidecar running on the vault and without one. Medians of `--runs`
starts each; a bare `python` start and `import mcp.server` alone are the floor.

    python -m benchmarks mcp_start [--runs 5]

Builds its own copy of the sample vault, indexed with the hash embedder (no model to load:
what is timed is the MCP server, not the embedding model), and starts a real
`vault-rag serve` on a free port for the sidecar runs. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from benchmarks.common import free_port, run_checked
from vault_rag.serving.sample import sample_vault_path

BIN = Path(sys.executable).parent
ENV = {**os.environ, "VAULT_RAG_EMBEDDINGS": "hash", "VAULT_RAG_LLM_MODEL": ""}


def server_cpu(data: Path) -> float:
    """CPU seconds (user + system) the running `vault-rag mcp` on `data` has used: unlike wall
    time, it does not grow with what else the machine runs."""
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            if b"mcp" in cmdline and str(data).encode() in cmdline:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            continue
    raise RuntimeError("the vault-rag mcp process was not found")


async def one_start(vault: Path, data: Path) -> tuple[float, float, str, float]:
    args = ["mcp", "--vault", str(vault), "--data-dir", str(data)]
    params = StdioServerParameters(command=str(BIN / "vault-rag"), args=args, env=ENV)
    started = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        listed = time.perf_counter() - started
        cpu = server_cpu(data)
        result = await client.call_tool("search_notes", {"query": "Enable Nanite Support"})
        searched = time.perf_counter() - started
        status = await client.call_tool("vault_status", {})
    assert not result.is_error and status.structured_content is not None
    return listed, searched, status.structured_content["served_by"], cpu


def timed(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `command`."""
    child = run_checked(command, ENV)
    return child.wall, child.cpu


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args(argv).runs
    root = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    try:
        vault, data = root / "vault", root / "data"
        shutil.copytree(sample_vault_path(), vault)
        index = [str(BIN / "vault-rag"), "index", "--vault", str(vault), "--data-dir", str(data)]
        subprocess.run(index, check=True, env=ENV, capture_output=True)
        rows: list[tuple[str, list[float], list[float], list[float]]] = []
        for code in ("pass", "import mcp.server"):
            runs_ = [timed([sys.executable, "-c", code]) for _ in range(runs)]
            rows.append((f"python -c '{code}'", [r[0] for r in runs_], [r[1] for r in runs_], []))

        alone = [anyio.run(one_start, vault, data) for _ in range(runs)]
        assert {a[2] for a in alone} == {"in-process"}
        rows.append(("vault-rag mcp, no sidecar", *_columns(alone)))

        port = free_port()
        serve = [str(BIN / "vault-rag"), "serve", "--vault", str(vault), "--data-dir", str(data)]
        serve += ["--port", str(port), "--log-level", "warning"]
        server = subprocess.Popen(serve, env=ENV, stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/v1/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("vault-rag serve did not start")
                time.sleep(0.2)
            time.sleep(1.0)  # the server record is written once the port answers
            near = [anyio.run(one_start, vault, data) for _ in range(runs)]
        finally:
            server.terminate()
            server.wait(30)
        assert {a[2] for a in near} == {"sidecar"}, near
        rows.append(("vault-rag mcp, sidecar running", *_columns(near)))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    load = os.getloadavg()[0]
    print(f"{runs} starts each, medians; {os.cpu_count()} CPUs, load average {load:.1f}\n")
    print("| start | first tools/list, wall (ms) | CPU until then (ms) | first search_notes (ms) |")
    print("|---|---:|---:|---:|")
    for name, listed, cpu, searched in rows:
        first = median_ms(searched) if searched else "—"
        print(f"| {name} | {median_ms(listed)} | {median_ms(cpu)} | {first} |")
    return 0


def _columns(starts: list[tuple[float, float, str, float]]) -> tuple[list[float], ...]:
    """(tools/list wall, CPU until then, first search) of each start."""
    return [a[0] for a in starts], [a[3] for a in starts], [a[1] for a in starts]
