"""`vault-rag serve` as a real process: the token is shown once and kept 0600, and a `kill -9`
in the middle of a batch upsert loses nothing: after a restart (start-up reconcile) the index
equals a clean full index of the vault. Embeddings come from the fake OpenAI server."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from test_server_helpers import (
    index_snapshot,
    rebuild_snapshot,
    server_settings,
    snapshot_diff,
    wait_until,
)
from vault_rag.index.vault_index import VaultIndex
from vault_rag.serving.context import build_provider
from vault_rag.serving.server_token import TOKEN_FILE, load_or_create_token
from vault_rag.vault.embeds import resolve_note

from fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.skipif(os.name != "posix", reason="kill -9 and file modes are POSIX")


def cli(command: str, vault: Path, data: Path) -> list[str]:
    where = ["--vault", str(vault), "--data-dir", str(data)]
    return [sys.executable, "-m", "vault_rag", command, *where]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """One `vault-rag serve` process."""

    def __init__(self, env: dict[str, str], vault: Path, data: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [*cli("serve", vault, data), "--port", str(self.port), "--log-level", "warning"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(self._up, 180, interval=0.2)
        self.token = (data / TOKEN_FILE).read_text().strip()
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited: {self.proc.stderr.read()}")  # type: ignore[union-attr]
        try:
            return httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def idle(self, timeout: float = 180) -> None:
        def done() -> bool:
            status = self.client.get("/v1/status").json()
            writer = status["writer"]
            return (
                writer["reconciled"]
                and writer["state"] == "idle"
                and not writer["queued"]
                and not status["pending"]
            )

        wait_until(done, timeout, interval=0.3)

    def stop(self) -> str:
        """Graceful stop (SIGTERM, as Ctrl-C); returns what it printed on stdout."""
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        return out

    def kill(self) -> None:
        self.client.close()
        self.proc.kill()  # SIGKILL: no shutdown handlers run
        self.proc.wait(30)


@pytest.fixture
def setup(tmp_path, sample_vault):
    with FakeOpenAIServer() as fake:
        vault = tmp_path / "vault"
        shutil.copytree(sample_vault, vault)
        env = dict(os.environ)
        env.update(
            VAULT_RAG_EMBEDDINGS="openai",
            VAULT_RAG_EMBEDDINGS_MODEL="fake-embedding",
            VAULT_RAG_EMBEDDINGS_BASE_URL=fake.base_url,
            VAULT_RAG_EMBEDDINGS_API_KEY="k",
            VAULT_RAG_EMBEDDINGS_BATCH_SIZE="2",  # many small store writes: more places to die
            VAULT_RAG_WATCH_DEBOUNCE="0.3",
        )
        env.pop("VAULT_RAG_LLM_MODEL", None)
        yield fake, env, vault, tmp_path / "data"


def test_token_is_created_once_shown_once_and_private(setup):
    _, env, vault, data = setup
    first = Served(env, vault, data)
    token = first.token
    assert first.client.get("/v1/status").status_code == 200
    printed = first.stop()
    assert token in printed
    assert stat.S_IMODE((data / TOKEN_FILE).stat().st_mode) == 0o600

    second = Served(env, vault, data)
    assert second.token == token
    assert token not in second.stop()
    shown = subprocess.run(
        cli("token", vault, data),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == token


def test_kill_9_during_a_batch_upsert_then_restart_is_consistent(setup):
    fake, env, vault, data = setup
    served = Served(env, vault, data)
    served.idle()
    rng = random.Random(5)
    notes = sorted(vault.rglob("*.md"))
    for round_ in range(2):
        fake.delay = 0.02  # slow embedding: the kill lands while vectors are being written
        for i, path in enumerate(notes[:12]):  # Obsidian saves the notes...
            text = path.read_text(encoding="utf-8") + f"\n\nEdit {round_}.{i}: okapi {i}.\n"
            path.write_text(text, encoding="utf-8")
        posted = [plugin_post(vault, path) for path in notes[:12]]  # ...the plugin posts them
        (vault / f"Deleted {round_}.md").unlink(missing_ok=True)
        notes[-1 - round_].unlink()
        answered: list[int] = []
        request = threading.Thread(target=_put, args=(served, posted, answered), daemon=True)
        request.start()
        time.sleep(rng.uniform(0.05, 0.6))
        served.kill()
        request.join(10)
        assert not answered  # killed while the upsert (chunks, then vectors) was running
        fake.delay = 0.0
        served = Served(env, vault, data)  # start-up reconcile finishes the job
        served.idle()
    served.stop()

    settings = server_settings(vault, data, fake)
    index = VaultIndex(vault, data, build_provider(settings))
    try:
        after = index_snapshot(index)
    finally:
        index.close()
    clean = rebuild_snapshot(settings, data.parent / "clean")
    assert not snapshot_diff(after, clean)


def plugin_post(vault: Path, path: Path) -> dict[str, object]:
    """What the plugin posts for a note: frontmatter + body with embeds resolved."""
    rel = path.relative_to(vault).as_posix()
    resolved = resolve_note(vault, rel)
    head = path.read_text(encoding="utf-8").split("\n")[: resolved.body_start_line - 1]
    return {
        "path": rel,
        "content": "\n".join([*head, resolved.text]) if head else resolved.text,
        "embeds": resolved.dependencies,
        "mtime": path.stat().st_mtime_ns / 1e6,
    }


def _put(served: Served, notes: list[dict], answered: list[int]) -> None:
    # wait=true: the request lasts until the vectors are written, so the kill lands inside it
    with contextlib.suppress(httpx.HTTPError):
        response = served.client.put("/v1/notes", json={"notes": notes}, params={"wait": "true"})
        answered.append(response.status_code)


def test_a_token_file_readable_by_others_is_tightened(tmp_path):
    token, created = load_or_create_token(tmp_path)
    assert created and len(token) >= 32
    (tmp_path / TOKEN_FILE).chmod(0o644)
    again, created = load_or_create_token(tmp_path)
    assert again == token and not created
    assert stat.S_IMODE((tmp_path / TOKEN_FILE).stat().st_mode) == 0o600
