"""Shared fixtures: the bundled sample vault and the real vaults in ../shared/vaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault_rag.sample import sample_vault_path

REPO_ROOT = Path(__file__).resolve().parent.parent
# The real vaults live beside the repository (../shared/vaults); CI copies shared/ there too.
SHARED_VAULTS = Path(
    os.environ.get("VAULT_RAG_SHARED_VAULTS", REPO_ROOT.parent / "shared" / "vaults")
)
SHARED_VAULT_NAMES = ("obsidian-help-en", "obsidian-help-zh", "ue-notes-zh")


@pytest.fixture(scope="session")
def sample_vault() -> Path:
    return sample_vault_path()


def shared_vault(name: str) -> Path:
    """Path of one real vault, or skip the test with the reason."""
    path = SHARED_VAULTS / name
    if not path.is_dir():
        pytest.skip(f"real vault {name!r} not found at {path} (../shared/vaults is absent)")
    return path


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """One real `chroma run` server on a free loopback port for the whole test session."""
    from store_backends import ChromaServer

    with ChromaServer(tmp_path_factory.mktemp("chroma-server") / "db") as server:
        yield server


@pytest.fixture(params=("chroma", "chroma-http", "milvus"))
def backend(request) -> tuple[str, str | None]:
    """(vector_store kind, chroma_url): parametrises a test over every backend."""
    url = request.getfixturevalue("chroma_server").url if request.param == "chroma-http" else None
    return request.param, url
