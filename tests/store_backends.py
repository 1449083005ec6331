"""Real vector-store backends for tests: a `chroma run` server on a free loopback port and
Milvus Lite in-process. Nothing is faked: the stores under test talk to the real thing."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, BinaryIO

from vault_rag.index.stores.factory import open_vector_store
from vault_rag.index.vault_index import VaultIndex
from vault_rag.settings import Settings

BACKENDS = ("chroma", "chroma-http", "milvus")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def chroma_cli() -> str:
    """The `chroma` CLI that ships with chromadb (beside this Python, else on PATH)."""
    beside = Path(sys.executable).parent / "chroma"
    found = str(beside) if beside.exists() else shutil.which("chroma")
    if not found:
        raise RuntimeError("the `chroma` CLI (installed with chromadb) was not found")
    return found


class ChromaServer:
    """`chroma run` on 127.0.0.1:<free port>, persisting under `path`; stopped on exit."""

    def __init__(self, path: Path, port: int | None = None) -> None:
        self.path = path
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> ChromaServer:
        self.path.mkdir(parents=True, exist_ok=True)
        log = self._log = (self.path.parent / f"chroma-{self.port}.log").open("wb")
        args = ["run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(
            [chroma_cli(), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer on {self.url} within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def backend_settings(kind: str, chroma_url: str | None = None, **values: Any) -> Settings:
    """Settings selecting backend `kind` (Milvus: Lite in the data dir; chroma-http: the
    test session's `chroma run` server)."""
    extra: dict[str, Any] = {"vector_store": kind}
    if kind == "chroma-http":
        if chroma_url is None:
            raise ValueError("chroma-http needs the chroma_server fixture's url")
        extra["chroma_url"] = chroma_url
    return Settings(**values, **extra)


def open_backend_index(
    kind: str, vault: Path, data_dir: Path, provider: Any, chroma_url: str | None = None
) -> VaultIndex:
    """A `VaultIndex` whose store is the real backend `kind`, built by the product's factory."""
    settings = backend_settings(kind, chroma_url, vault=vault, data_dir=data_dir)
    store, info = open_vector_store(settings, vault, data_dir, provider.model_id)
    return VaultIndex(vault, data_dir, provider, store=store, store_info=info)


def backend_env(kind: str, chroma_url: str | None = None) -> dict[str, str]:
    """Environment overrides selecting backend `kind` for a `vault-rag` subprocess."""
    env = {"VAULT_RAG_VECTOR_STORE": kind}
    if kind == "chroma-http":
        assert chroma_url is not None
        env["VAULT_RAG_CHROMA_URL"] = chroma_url
    return env
