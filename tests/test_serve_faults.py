"""`vault-rag serve` and the CLI as real processes, against faults of issue 13: a port in
use, file modes of the data dir, secrets in the log, damaged SQLite files. Embeddings come
from the wire-level fake OpenAI server; answers are extractive (no chat model)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from test_server_helpers import read_sse, wait_until
from vault_rag.serving.server_token import TOKEN_FILE

from fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes and signals are POSIX")


def cli(command: str, vault: Path, data: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "vault_rag",
        command,
        "--vault",
        str(vault),
        "--data-dir",
        str(data),
        *extra,
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def setup(tmp_path, sample_vault):
    with FakeOpenAIServer() as fake:
        vault = tmp_path / "vault"
        shutil.copytree(sample_vault, vault)
        yield fake_env(fake), vault, tmp_path / "data"


def fake_env(fake: FakeOpenAIServer) -> dict[str, str]:
    """The environment of a `vault-rag` process embedding through `fake`, with no chat model
    and no user settings file."""
    env = dict(os.environ)
    env.update(
        VAULT_RAG_EMBEDDINGS="openai",
        VAULT_RAG_EMBEDDINGS_MODEL="fake-embedding",
        VAULT_RAG_EMBEDDINGS_BASE_URL=fake.base_url,
        VAULT_RAG_EMBEDDINGS_API_KEY="k",
        VAULT_RAG_WATCH_DEBOUNCE="0.3",
        COLUMNS="200",  # rich wraps at 80 columns otherwise
    )
    for key in ("VAULT_RAG_LLM_MODEL", "VAULT_RAG_CONFIG"):
        env.pop(key, None)
    return env


class Serve:
    """`vault-rag serve` with its output in files (an info-level log can fill a pipe)."""

    def __init__(self, env: dict[str, str], vault: Path, data: Path, log_level: str = "info"):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data.parent / f"serve-{self.port}.log"
        with self.log.open("w") as sink:
            self.proc = subprocess.Popen(
                [*cli("serve", vault, data), "--port", str(self.port), "--log-level", log_level],
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        wait_until(self._up, 180, interval=0.2)
        self.token = (data / TOKEN_FILE).read_text().strip()
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited: {self.log.read_text()}")
        try:
            return httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def idle(self) -> None:
        def done() -> bool:
            status = self.client.get("/v1/status").json()
            writer = status["writer"]
            return writer["reconciled"] and writer["state"] == "idle" and not writer["queued"]

        wait_until(done, 120, interval=0.3)

    def stop(self) -> str:
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        return self.log.read_text()


def test_with_the_handshake_serve_tells_its_parent_the_url_and_token(setup):
    """What the plugin's zero-setup start relies on: started with VAULT_RAG_HANDSHAKE=1, the
    sidecar prints one handshake line on stdout once the port is bound; its token is the one
    `vault-rag token` prints and the API accepts. Without it, no such line."""
    import json

    env, vault, data = setup
    port = free_port()
    proc = subprocess.Popen(
        [*cli("serve", vault, data), "--port", str(port)],
        env={**env, "VAULT_RAG_HANDSHAKE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # the token of a first start, then the handshake
            lines.append(line)
            if line.startswith("vault-rag-handshake "):
                break
        handshake = json.loads(lines[-1].removeprefix("vault-rag-handshake "))
        assert handshake["url"] == f"http://127.0.0.1:{port}" and handshake["version"]
        token = subprocess.run(
            cli("token", vault, data), env=env, check=True, capture_output=True, text=True
        ).stdout.strip()
        assert handshake["token"] == token

        def healthy() -> bool:
            try:
                return httpx.get(f"{handshake['url']}/v1/health", timeout=2).is_success
            except httpx.HTTPError:
                return False

        wait_until(healthy, 180, interval=0.2)
        headers = {"Authorization": f"Bearer {handshake['token']}"}
        assert httpx.get(f"{handshake['url']}/v1/status", headers=headers).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    served = Serve(env, vault, data, log_level="warning")  # no handshake unless asked
    log = served.stop()
    assert "vault-rag-handshake" not in log


def test_port_0_gives_each_vault_its_own_free_port(setup, tmp_path):
    """Two vaults side by side (issue 29): `serve --port 0` binds a free port, says it in the
    handshake and records it in the data dir's server.json; each sidecar answers with its own
    token on its own port."""
    import json

    from vault_rag.serving.server_info import read_server_record

    env, vault, data = setup
    other_vault, other_data = tmp_path / "other", tmp_path / "other-data"
    shutil.copytree(vault, other_vault)
    procs = []
    try:
        found = []
        for v, d in ((vault, data), (other_vault, other_data)):
            proc = subprocess.Popen(
                [*cli("serve", v, d), "--port", "0"],
                env={**env, "VAULT_RAG_HANDSHAKE": "1"},
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            procs.append(proc)
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("vault-rag-handshake "):
                    found.append(json.loads(line.removeprefix("vault-rag-handshake ")))
                    break
        urls = [h["url"] for h in found]
        assert len(set(urls)) == 2 and not any(u.endswith(":0") for u in urls)
        for handshake, d, v in zip(found, (data, other_data), (vault, other_vault), strict=True):
            wait_until(lambda d=d: read_server_record(d) is not None, 180, interval=0.2)
            record = read_server_record(d)
            assert record is not None and record.url == handshake["url"]
            headers = {"Authorization": f"Bearer {handshake['token']}"}
            status = httpx.get(f"{handshake['url']}/v1/status", headers=headers).json()
            assert status["vault"] == str(v.resolve())
        wrong = {"Authorization": f"Bearer {found[0]['token']}"}
        assert httpx.get(f"{urls[1]}/v1/status", headers=wrong).status_code == 401
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)


def ask(client: httpx.Client, question: str, thread_id: str | None = None) -> dict:
    body = {"question": question, **({"thread_id": thread_id} if thread_id else {})}
    with client.stream("POST", "/v1/ask", json=body) as response:
        assert response.status_code == 200
        events = list(read_sse(response.iter_lines()))
    assert events[-1].event == "final", events[-1]
    import json

    return json.loads(events[-1].data)


# -- item 6: the port first ---------------------------------------------------------------------
def test_a_port_in_use_fails_at_once_without_indexing(setup):
    env, vault, data = setup
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        run = subprocess.run(
            [*cli("serve", vault, data), "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 4, run.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in run.stderr.replace("\n", " ")
    assert "Traceback" not in run.stderr
    assert not (data / "manifest.sqlite3").exists()  # nothing was indexed
    assert time.monotonic() - started < 60


# -- item 7: private files, no token in the log -------------------------------------------------
def test_the_data_dir_is_private_and_no_token_reaches_the_log(setup):
    env, vault, data = setup
    subprocess.run(cli("token", vault, data), env=env, check=True, capture_output=True)
    served = Serve(env, vault, data)
    served.idle()
    token = served.token
    assert httpx.get(f"{served.url}/v1/health?token={token}").status_code == 200
    leaked = served.client.get("/v1/status", params={"access_token": token, "wait": "x"})
    assert leaked.status_code == 200
    assert served.client.get(f"/v1/threads/{token[:40].replace('-', '_')}").status_code in (
        404,
        422,
    )
    result = ask(served.client, "What is BeginPlay?")
    rated = served.client.post(f"/v1/answers/{result['answer_id']}/feedback", json={"rating": 1})
    assert rated.status_code == 200, rated.text
    promoted = served.client.post(f"/v1/answers/{result['answer_id']}/promote", json={})
    assert promoted.status_code == 200, promoted.text
    served.idle()
    log = served.stop()

    assert "GET /v1/health?token=[redacted]" in log  # the access log ran, redacted
    assert token not in log
    loose = []
    for root, dirs, files in os.walk(data):
        for name in dirs + files:
            path = Path(root) / name
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o077 or (path.is_dir() and mode != 0o700):
                loose.append(f"{path.relative_to(data)} {mode:o}")
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert (data / "manifest.sqlite3").exists() and (data / "feedback.sqlite3").exists()
    assert (data / "threads.sqlite3").exists() and (data / "chroma").is_dir()
    assert not loose, loose
    # A promoted answer is a note in the vault: the user's own modes, not the private ones.
    umask = os.umask(0o022)
    os.umask(umask)
    note = vault / promoted.json()["path"]
    assert stat.S_IMODE(note.stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(note.parent.stat().st_mode) == 0o777 & ~umask


def test_an_old_data_dir_is_tightened_when_opened(setup):
    env, vault, data = setup
    data.mkdir(mode=0o755)
    (data / "old.json").write_text("{}")
    (data / "old.json").chmod(0o644)
    index = subprocess.run(cli("index", vault, data), env=env, capture_output=True, text=True)
    assert index.returncode == 0, index.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / "old.json").stat().st_mode) == 0o600


# -- item 3: damaged SQLite files -----------------------------------------------------------------
def spoil(path: Path) -> bytes:
    """Garbage over the start of a file (as a bad sector or a stray write would leave it)."""
    with path.open("r+b") as handle:
        handle.write(b"\xde\xad garbage \xbe\xef" * 256)
    return path.read_bytes()


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vault_rag", *args], env=env, capture_output=True, text=True
    )


def status_json(env: dict[str, str], vault: Path, data: Path) -> dict:
    import json

    run = run_cli(env, "status", "--vault", str(vault), "--data-dir", str(data), "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout)


def test_a_damaged_manifest_is_reported_then_set_aside_and_rebuilt(setup):
    env, vault, data = setup
    where = ["--vault", str(vault), "--data-dir", str(data)]
    assert run_cli(env, "index", *where).returncode == 0
    before = status_json(env, vault, data)
    garbage = spoil(data / "manifest.sqlite3")

    status = run_cli(env, "status", *where)
    assert status.returncode == 1 and "Traceback" not in status.stderr
    assert "manifest.sqlite3: file is not a database" in status.stderr.replace("\n", " ")
    assert "doctor" in status.stderr

    rebuilt = run_cli(env, "index", *where, "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "Traceback" not in rebuilt.stderr
    assert "moved aside to manifest.sqlite3.damaged-" in rebuilt.stderr.replace("\n", " ")
    (aside,) = data.glob("manifest.sqlite3.damaged-*")
    assert aside.read_bytes()[: len(garbage) // 2] == garbage[: len(garbage) // 2]
    after = status_json(env, vault, data)
    assert (after["notes"], after["chunks"], after["pending"]) == (
        before["notes"],
        before["chunks"],
        0,
    )


def test_serve_sets_damaged_stores_aside_and_starts(setup):
    env, vault, data = setup
    served = Serve(env, vault, data, log_level="warning")
    served.idle()
    first = ask(served.client, "What is BeginPlay?")
    assert (
        served.client.post(
            f"/v1/answers/{first['answer_id']}/feedback", json={"rating": 1}
        ).status_code
        == 200
    )
    served.stop()
    spoil(data / "chroma" / "chroma.sqlite3")
    feedback = spoil(data / "feedback.sqlite3")
    spoil(data / "threads.sqlite3")

    served = Serve(env, vault, data, log_level="warning")
    served.idle()
    status = served.client.get("/v1/status").json()
    assert status["notes"] > 20 and status["embedded"] == status["chunks"] > 0
    hits = served.client.post("/v1/search", json={"query": "BeginPlay"}).json()["results"]
    assert hits and any(h["dense_score"] is not None for h in hits)
    again = ask(served.client, "What is BeginPlay?")  # fresh conversation and answer stores
    assert (
        served.client.post(
            f"/v1/answers/{again['answer_id']}/feedback", json={"rating": 1}
        ).status_code
        == 200
    )
    log = served.stop()
    assert "Traceback" not in log
    for name in ("chroma", "feedback.sqlite3", "threads.sqlite3"):
        assert f"({name}) is damaged" in log.replace("\n", " "), log
        assert list(data.glob(f"{name}.damaged-*")), name
    (kept,) = [  # never deleted: kept as it was (with its -wal / -shm beside it)
        p for p in data.glob("feedback.sqlite3.damaged-*") if not p.name.endswith(("-wal", "-shm"))
    ]
    assert kept.read_bytes()[:1000] == feedback[:1000]
    assert "cannot be rebuilt from the vault" in log.replace("\n", " ")


def test_doctor_checks_and_repairs_a_data_dir(setup):
    env, vault, data = setup
    where = ["--vault", str(vault), "--data-dir", str(data)]
    assert run_cli(env, "index", *where).returncode == 0
    healthy = run_cli(env, "doctor", *where)
    assert healthy.returncode == 0 and "no damage found" in healthy.stdout, healthy.stdout
    assert "vector store:" in healthy.stdout.replace("\n", " ")

    spoil(data / "lexical" / "lexical.sqlite3")
    found = run_cli(env, "doctor", *where)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "damaged" in found.stdout and "lexical" in found.stdout
    repaired = run_cli(env, "doctor", *where, "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    text = repaired.stdout.replace("\n", " ")
    assert "moved aside to lexical.damaged-" in text and "rebuilt from the vault" in text
    assert list(data.glob("lexical.damaged-*"))
    clean = run_cli(env, "doctor", *where)
    assert clean.returncode == 0 and "no damage found" in clean.stdout, clean.stdout
    assert "Traceback" not in found.stderr + repaired.stderr + clean.stderr
