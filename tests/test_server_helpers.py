"""Shared pieces of the server tests (no tests here).

* `LiveServer` — the real app on a real uvicorn server, on a free loopback port, in a thread.
* `server_settings()` — settings for a vault and data dir with the wire-level fake OpenAI
  server as the embedding model (fast and deterministic) and short watcher delays.
* `read_sse()` — reads a `text/event-stream` response the way a browser's `EventSource` parser
  does (fields per line, an event per blank line, comments skipped).
* `index_snapshot()` / `rebuild_snapshot()` — what an index holds, to compare with a clean
  full index of the same vault.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from vault_rag.index.vault_index import VaultIndex
from vault_rag.serving.context import build_provider, make_indexer
from vault_rag.settings import Settings

from fakes.openai_server import FakeOpenAIServer


def server_settings(vault: Path, data: Path, fake: FakeOpenAIServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "vault": vault,
        "data_dir": data,
        "embeddings": "openai",
        "embeddings_model": "fake-embedding",
        "embeddings_base_url": fake.base_url,
        "embeddings_api_key": "k",
        "watch_debounce": 0.2,
        "watch_max_delay": 2.0,
        "watch_retry_delay": 0.3,
        "llm_model": None,
        "tavily_api_key": None,
        # The fake's embeddings are random per text, so note centroids derived from them are
        # noise that could lift a random note over the one a test posted: the note signal is
        # off unless a test turns it on.
        "note_weight": 0.0,
    }
    values.update(overrides)
    return Settings(**values)


def fake_chat_settings(fake: FakeOpenAIServer) -> dict[str, object]:
    """A live server's settings (a module's `SERVER_SETTINGS`) with the fake's chat model and
    no watcher."""
    return {
        "llm_base_url": fake.base_url,
        "llm_model": "fake-chat",
        "llm_api_key": "k",
        "llm_max_retries": 0,
        "llm_timeout": 30.0,
        "server_watch": False,
    }


class LiveServer:
    """`with LiveServer(app) as live:` — served at `live.url` until the block ends."""

    def __init__(self, app: Any, token: str = "test-token-0123456789") -> None:
        self.token = token
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=3)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with contextlib.suppress(SystemExit):  # uvicorn exits when the app's start-up fails
            self.server.run(sockets=[self.sock])

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.auth, timeout=60, **kwargs)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 180
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(60)
        self.sock.close()

    @property
    def state(self) -> Any:
        return self.app.state.server


def wait_until(check: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


def wait_idle(live: LiveServer, timeout: float = 120) -> None:
    """Until the watcher holds no events and the writer has nothing left to do."""
    watcher = live.state.watcher
    if watcher is not None:
        wait_until(lambda: not watcher.pending, timeout)
    assert live.state.writer.wait_idle(timeout), live.state.writer.status


@dataclass
class SseEvent:
    event: str
    data: str


def read_sse(lines: Iterator[str]) -> Iterator[SseEvent]:
    """The WHATWG event-stream parsing algorithm, for `event` and `data` fields."""
    event, data = "", []
    for raw in lines:
        line = raw.rstrip("\r")
        if not line:
            if data:
                yield SseEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue  # a comment (keep-alive ping)
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)


def index_snapshot(index: VaultIndex) -> dict[str, Any]:
    manifest = index.manifest
    return {
        "chunks": manifest.chunk_hashes(),
        "notes": {p: r.file_hash for p, r in manifest.notes().items()},
        "store": sorted(index.store.ids()),
        "lexical": sorted(index.lexical.ids()),
        "pending": manifest.counts()["pending"],
    }


def rebuild_snapshot(settings: Settings, data: Path) -> dict[str, Any]:
    """A clean full index of `settings.vault` in `data`, as `vault-rag index` builds it."""
    clean = settings.model_copy(update={"data_dir": data})
    index = VaultIndex(clean.vault, data, build_provider(clean))  # type: ignore[arg-type]
    try:
        make_indexer(clean, index).run()
        return index_snapshot(index)
    finally:
        index.close()


def snapshot_diff(got: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    """What differs between two snapshots, readably (empty when equal)."""
    out: dict[str, Any] = {}
    for key in want:
        a, b = got[key], want[key]
        if a == b:
            continue
        if isinstance(b, dict):
            out[key] = {
                "extra": sorted(set(a) - set(b)),
                "missing": sorted(set(b) - set(a)),
                "different": sorted(k for k in set(a) & set(b) if a[k] != b[k]),
            }
        elif isinstance(b, list):
            out[key] = {"extra": sorted(set(a) - set(b)), "missing": sorted(set(b) - set(a))}
        else:
            out[key] = (a, b)
    return out
