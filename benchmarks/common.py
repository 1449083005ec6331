"""The set-up every benchmark shares, written once: where things are, a free port, a sidecar
subprocess's environment, timing a callable or a child process, and the test helpers some
benchmarks borrow (PDF fixtures, a Chroma server)."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIDECAR = ROOT / "sidecar"
TESTS = ROOT / "tests"
QA = TESTS / "data" / "qa"


SCRIPTS = ROOT / "scripts"


def borrow(folder: Path) -> None:
    """Make `folder` (TESTS or SCRIPTS) importable: the PDF fixture writer, the store back-ends'
    servers and the vault generators are used as they are, never copied here."""
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sidecar_env(kind: str, work: Path, code: Path = ROOT, **extra: str) -> dict[str, str]:
    """Environment for a sidecar subprocess: the code of checkout `code`, the embedder `kind`
    and an empty settings file (a user's own config must not change the figures)."""
    empty = work / "empty-settings.toml"
    empty.touch()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(code / "sidecar"), str(ROOT), env.get("PYTHONPATH", "")) if p
    )
    env["VAULT_RAG_CONFIG"] = str(empty)
    env["VAULT_RAG_EMBEDDINGS"] = kind
    env.pop("VAULT_RAG_DATA_DIR", None)
    env.update(extra)
    return env


def cli(*args: str) -> list[str]:
    """`vault-rag ARGS` as the current interpreter runs it (what the console script does)."""
    return [sys.executable, "-m", "vault_rag", *args]


@dataclass
class ChildRun:
    wall: float
    cpu: float  # user + system of the child itself, from wait4
    returncode: int
    max_rss_mb: float
    stdout: str
    stderr: str


def run_child(cmd: list[str], env: dict[str, str], timeout: float = 4 * 3600) -> ChildRun:
    """Run to completion: wall time and the child's own CPU and peak RSS (wait4 reads its
    rusage before anything else reaps it; not the whole process tree)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ChildRun(
            wall,
            usage.ru_utime + usage.ru_stime,
            proc.returncode,
            usage.ru_maxrss / 1024,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
        )


def run_checked(cmd: list[str], env: dict[str, str]) -> ChildRun:
    """`run_child`, stopping the benchmark with the child's stderr when it fails."""
    child = run_child(cmd, env)
    if child.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({child.returncode}):\n{child.stderr[-2000:]}")
    return child


def median_time(fn: Callable[[], object], repeats: int, clock: Callable[[], float]) -> float:
    """Median seconds of `repeats` calls of `fn` on `clock` (time.process_time for CPU,
    time.perf_counter for wall)."""
    runs = []
    for _ in range(repeats):
        started = clock()
        fn()
        runs.append(clock() - started)
    return statistics.median(runs)


def cpu_median(fn: Callable[[], object], repeats: int) -> float:
    return median_time(fn, repeats, time.process_time)


def wall_median(fn: Callable[[], object], repeats: int) -> float:
    return median_time(fn, repeats, time.perf_counter)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000
