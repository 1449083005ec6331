"""The small sample vault that ships inside the package, for the demo and the tests."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def sample_vault_path() -> Path:
    """Filesystem path of the bundled sample vault (the package is installed unzipped)."""
    return Path(str(files("vault_rag") / "sample_vault"))
