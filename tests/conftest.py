"""Shared fixtures: the bundled sample vault, the real vaults in ../shared/vaults, the vector
store backends, and one live server per test module (`live`, `client`, `fake`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from vault_rag.serving.sample import sample_vault_path

REPO_ROOT = Path(__file__).resolve().parent.parent
# The real vaults live beside the repository (../shared/vaults); CI copies shared/ there too.
SHARED_VAULTS = Path(
    os.environ.get("VAULT_RAG_SHARED_VAULTS", REPO_ROOT.parent / "shared" / "vaults")
)
SHARED_VAULT_NAMES = ("obsidian-help-en", "obsidian-help-zh", "ue-notes-zh")
LIVE_TOKEN = "test-token-0123456789"  # the `live` server's bearer token


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


@pytest.fixture(scope="module")
def hashed_index(tmp_path_factory, sample_vault: Path):
    """The sample vault indexed with the hash stand-in embedder (real Chroma, BM25 and
    manifest, no model), one per test module."""
    from vault_rag.embeddings.hashing import HashProvider
    from vault_rag.index.updates.indexer import Indexer
    from vault_rag.index.vault_index import VaultIndex

    index = VaultIndex(sample_vault, tmp_path_factory.mktemp("data"), HashProvider())
    Indexer(index).run()
    yield index
    index.close()


# -- one live server per test module --------------------------------------------------------------
@pytest.fixture(scope="module")
def fake():
    """The wire-level fake OpenAI server (embeddings and chat), one per test module."""
    from fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def live(request, tmp_path_factory, sample_vault, fake):
    """The real app on a real uvicorn server (a free loopback port), one per test module, with
    everything indexed before the first test. Over a copy of the sample vault, with the fake's
    embeddings (`test_server_helpers.server_settings`). A module tunes it with
    `SERVER_SETTINGS`, a dict of setting overrides or a function of the fake returning one,
    and `SERVER_VAULT`, a function writing the vault into the path it gets (else the sample)."""
    from test_server_helpers import LiveServer, server_settings, wait_idle
    from vault_rag.api import create_app

    overrides = getattr(request.module, "SERVER_SETTINGS", {})
    if callable(overrides):
        overrides = overrides(fake)
    root = tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_"))
    vault = root / "vault"
    write_vault = getattr(request.module, "SERVER_VAULT", None)
    if write_vault is None:
        shutil.copytree(sample_vault, vault)
    else:
        write_vault(vault)
    settings = server_settings(vault, root / "data", fake, **overrides)
    with LiveServer(create_app(settings, token=LIVE_TOKEN), token=LIVE_TOKEN) as server:
        wait_idle(server)
        yield server


@pytest.fixture
def client(live):
    """An HTTP client of the module's live server, with its token."""
    with live.client() as c:
        yield c
