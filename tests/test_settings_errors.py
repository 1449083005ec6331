"""Issue 31 (also fix): a settings file that is missing, not TOML, or holds a bad value was a
traceback; every command now says what is wrong in one line and exits 2. Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def status(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    full = dict(os.environ, **env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "vault_rag",
            "status",
            "--vault",
            str(vault),
            "--data-dir",
            str(tmp_path / "data"),
        ],
        env=full,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "does not exist"),
        ("top_k = [", "is not valid TOML"),
        ('server_port = "many"', "server_port"),
    ],
)
def test_a_bad_settings_file_is_one_line(tmp_path: Path, content: str | None, expected: str):
    config = tmp_path / "vault-rag.toml"
    if content is not None:
        config.write_text(content, encoding="utf-8")
    done = status(tmp_path, VAULT_RAG_CONFIG=str(config))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "╭" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], lines
