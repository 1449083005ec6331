"""The benchmark package's one entry point: every benchmark it lists imports and parses its
arguments (`NAME --help`) in a real `python -m benchmarks` process, and an unknown name is a
clear error. Nothing is timed here: the benchmarks themselves print tables (docs/benchmarks.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import BENCHMARKS

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sidecar")])}
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_listing_names_every_benchmark_module():
    modules = {p.stem for p in (ROOT / "benchmarks").glob("*.py")}
    shared = {"__init__", "__main__", "common", "procs", "stats"}
    assert set(BENCHMARKS) == modules - shared
    listed = run()
    assert listed.returncode == 0
    for name in BENCHMARKS:
        assert f"  {name} " in listed.stdout


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_each_benchmark_imports_and_parses_its_arguments(name):
    result = run(name, "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage:" in result.stdout


def test_an_unknown_name_is_a_clear_error():
    result = run("no-such-bench")
    assert result.returncode == 2
    assert "no benchmark named 'no-such-bench'" in result.stderr
