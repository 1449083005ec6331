"""Issue 41 on real parts: a real `vault-rag serve --remote-listen 127.0.0.2:PORT` (both
listeners in one process), the CLI as the desktop (`devices pair|list|revoke`) and as another
device (`pair`, `search|ask --remote`), and raw sealed messages from this test as an attacker
would craft them. Embeddings and the chat model come from the wire-level fake OpenAI server
(chat scripted by `ScriptedModel`). Traffic goes to loopback addresses only."""

from __future__ import annotations

import json
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

from test_graph_helpers import ScriptedModel
from test_serve_faults import cli, fake_env
from test_server_helpers import wait_until
from vault_rag.remote import envelope
from vault_rag.remote.client import DeviceFile, RemoteClient, RemoteError, next_counter
from vault_rag.serving.server_token import TOKEN_FILE

from fakes.openai_server import ChatReply, FakeOpenAIServer

DEVICE_HOST = "127.0.0.2"


def can_bind(host: str) -> bool:
    try:
        with socket.socket() as probe:
            probe.bind((host, 0))
    except OSError:
        return False
    return True


pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="file modes and signals are POSIX"),
    # Linux routes all of 127/8 to loopback; macOS has only 127.0.0.1 unless an alias is added
    pytest.mark.skipif(not can_bind(DEVICE_HOST), reason=f"{DEVICE_HOST} is not a loopback here"),
]
QUESTION = "Wie funktioniert BeginPlay im Lebenszyklus eines Actors?"


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def run(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "vault_rag", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if check:
        assert done.returncode == 0, done.stderr + done.stdout
    return done


class RemoteServe:
    """`vault-rag serve` with a remote listener, its output in a file."""

    def __init__(self, env: dict[str, str], vault: Path, data: Path) -> None:
        self.port = free_port("127.0.0.1")
        self.remote_port = free_port(DEVICE_HOST)
        self.url = f"http://127.0.0.1:{self.port}"
        self.remote = f"http://{DEVICE_HOST}:{self.remote_port}"
        self.log = data.parent / f"serve-{self.port}.log"
        remote = f"{DEVICE_HOST}:{self.remote_port}"
        args = ["--port", str(self.port), "--remote-listen", remote, "--log-level", "debug"]
        with self.log.open("w") as sink:
            self.proc = subprocess.Popen(
                [*cli("serve", vault, data), *args], env=env, stdout=sink, stderr=subprocess.STDOUT
            )
        wait_until(self._up, 180, interval=0.2)
        self.token = (data / TOKEN_FILE).read_text().strip()
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )
        wait_until(lambda: self.client.get("/v1/status").json()["writer"]["reconciled"], 120)

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited: {self.log.read_text()}")
        try:
            local = httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200
            return local and httpx.get(f"{self.remote}/remote/v1/hello", timeout=2).is_success
        except httpx.HTTPError:
            return False

    def alive(self) -> bool:
        return (
            self.proc.poll() is None
            and httpx.get(f"{self.remote}/remote/v1/hello", timeout=10).status_code == 200
        )

    def stop(self) -> str:
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        return self.log.read_text()


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def model(fake):
    scripted = ScriptedModel()
    fake.default_chat_reply = scripted
    yield scripted
    fake.default_chat_reply = None


def chat_env(fake: FakeOpenAIServer, **extra: str) -> dict[str, str]:
    env = fake_env(fake)
    env.update(
        VAULT_RAG_LLM_BASE_URL=fake.base_url,
        VAULT_RAG_LLM_MODEL="fake-chat",
        VAULT_RAG_LLM_API_KEY="k",
        VAULT_RAG_LLM_MAX_RETRIES="0",
        VAULT_RAG_SERVER_WATCH="false",
        VAULT_RAG_REMOTE_PAIR_ATTEMPTS_PER_MINUTE="1000",
        **extra,
    )
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory, sample_vault, fake, model):
    root = tmp_path_factory.mktemp("remote")
    vault, data = root / "vault", root / "data"
    shutil.copytree(sample_vault, vault)
    env = chat_env(fake)
    server = RemoteServe(env, vault, data)
    yield server, env, vault, data, root
    log = server.stop()
    (root / "final.log").write_text(log)


def new_code(site, *extra: str) -> dict:
    _, env, vault, data, _ = site
    done = run(
        env, "devices", "pair", "--vault", str(vault), "--data-dir", str(data), "--json", *extra
    )
    return json.loads(done.stdout)


def pair_device(site, name: str, *extra: str) -> Path:
    server, env, _, _, root = site
    code = new_code(site, *extra)
    assert code["remote_url"] == server.remote
    out = root / f"{name}.json"
    run(env, "pair", server.remote, code["code"], "--name", name, "--out", str(out))
    return out


def devices_file(site) -> dict:
    return json.loads((site[3] / "devices.json").read_text())


# -- pairing ------------------------------------------------------------------------------------
def test_pairing_and_a_remote_search_give_the_local_json(site):
    server, env, vault, data, _root = site
    out = pair_device(site, "laptop")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE((data / "devices.json").stat().st_mode) == 0o600
    saved = DeviceFile.load(out)
    assert saved.role == "read" and saved.url == server.remote
    listed = json.loads(
        run(env, "devices", "list", "--vault", str(vault), "--data-dir", str(data), "--json").stdout
    )
    assert [d["name"] for d in listed["devices"]] == ["laptop"]
    assert "key" not in listed["devices"][0]
    remote = run(
        env, "search", "BeginPlay", "--remote", server.remote, "--device-file", str(out), "--json"
    )
    local = run(
        env, "search", "BeginPlay", "--vault", str(vault), "--data-dir", str(data), "--json"
    )
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert json.loads(remote.stdout)["results"]
    # The counter is kept in the device file: the next run goes on from it.
    before = DeviceFile.load(out).counter
    run(env, "search", "Actor", "--remote", server.remote, "--device-file", str(out), "--json")
    assert DeviceFile.load(out).counter == before + 1
    assert devices_file(site)["devices"][0]["last_seen"] is not None


def test_a_remote_ask_streams_the_local_answer(site, model):
    server, env, _vault, _data, _root = site
    out = pair_device(site, "asker")
    remote = run(
        env, "ask", QUESTION, "--remote", server.remote, "--device-file", str(out), "--json"
    )
    final = json.loads(remote.stdout)
    assert final["answer"] and final["thread_id"]
    with RemoteClient(out) as client:
        events = [k for k, _ in client.stream("POST", "/v1/ask", {"question": QUESTION})]
    assert events[0] == "head" and events.count("body") >= 3  # event by event, sealed each


def test_a_wrong_code_is_refused_burns_the_code_and_stores_nothing(site):
    server, env, _, data, root = site
    before = (data / "devices.json").read_bytes() if (data / "devices.json").exists() else b""
    code = new_code(site)["code"]
    digits = code.replace("-", "")
    wrong = digits[:-1] + str((int(digits[-1]) + 1) % 10)
    done = run(
        env,
        "pair",
        server.remote,
        wrong,
        "--name",
        "thief",
        "--out",
        str(root / "t.json"),
        check=False,
    )
    assert done.returncode == 1 and "wrong code" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    again = run(
        env,
        "pair",
        server.remote,
        code,
        "--name",
        "thief",
        "--out",
        str(root / "t2.json"),
        check=False,
    )
    assert again.returncode == 1 and "refused" in again.stderr  # one guess per code
    assert not (root / "t.json").exists() and not (root / "t2.json").exists()
    after = (data / "devices.json").read_bytes() if (data / "devices.json").exists() else b""
    assert after == before


def test_a_used_code_is_refused(site):
    server, env, _, _, root = site
    code = new_code(site)["code"]
    run(env, "pair", server.remote, code, "--name", "once", "--out", str(root / "once.json"))
    names = [d["name"] for d in devices_file(site)["devices"]]
    done = run(
        env,
        "pair",
        server.remote,
        code,
        "--name",
        "twice",
        "--out",
        str(root / "twice.json"),
        check=False,
    )
    assert done.returncode == 1 and "refused" in done.stderr
    assert [d["name"] for d in devices_file(site)["devices"]] == names


# -- sealed calls ---------------------------------------------------------------------------------
def sealed(
    device_file: Path, message: dict, counter: int | None = None
) -> tuple[bytes, int, DeviceFile]:
    device, next_value = next_counter(device_file)
    counter = next_value if counter is None else counter
    body = envelope.seal_request(bytes.fromhex(device.key), device.device_id, counter, message)
    return body, counter, device


STATUS = {"method": "GET", "path": "/v1/status", "query": "", "body": None}


def post(server, body: bytes, device_id: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{server.remote}/remote/v1/call",
        content=body,
        headers={"X-Device": device_id, **headers},
        timeout=60,
    )


def test_tampered_truncated_replayed_and_unknown_messages_are_refused(site):
    server = site[0]
    out = pair_device(site, "victim")
    body, counter, device = sealed(out, {**STATUS, "ts": int(time.time())})
    tampered = bytearray(body)
    tampered[-5] ^= 0x40
    assert post(server, bytes(tampered), device.device_id).status_code == 401
    assert post(server, body[:20], device.device_id).status_code == 400  # truncated
    assert post(server, body[:-1], device.device_id).status_code == 401
    assert post(server, body, "dev-0000000000000000").status_code == 401  # unknown device
    assert post(server, body, "").status_code == 401
    assert post(server, body, device.device_id).status_code == 200  # the genuine one, once
    replay = post(server, body, device.device_id)
    assert replay.status_code == 409 and replay.json()["code"] == "replayed"
    # Out of order inside the window is fine once; far behind the window is not.
    ahead, _, _ = sealed(out, {**STATUS, "ts": int(time.time())}, counter=counter + 70)
    late, _, _ = sealed(out, {**STATUS, "ts": int(time.time())}, counter=counter + 69)
    old, _, _ = sealed(out, {**STATUS, "ts": int(time.time())}, counter=counter + 1)
    assert post(server, ahead, device.device_id).status_code == 200
    assert post(server, late, device.device_id).status_code == 200
    assert post(server, old, device.device_id).status_code == 409
    stale, _, _ = sealed(out, {**STATUS, "ts": int(time.time()) - 3600}, counter=counter + 80)
    assert post(server, stale, device.device_id).status_code == 401
    assert server.alive()


def test_reordered_or_altered_response_frames_fail_on_the_device(site):
    server = site[0]
    out = pair_device(site, "reader")
    body, counter, device = sealed(out, {**STATUS, "ts": int(time.time())})
    raw = post(server, body, device.device_id).content
    frames, rest = [], raw
    while rest:
        size = int.from_bytes(rest[:4], "big")
        frames.append(rest[: 4 + size])
        rest = rest[4 + size :]
    assert len(frames) >= 3
    key = bytes.fromhex(device.key)
    intact = envelope.FrameReader(key, device.device_id, counter)
    assert [k for k, _ in intact.feed(raw)][-1] == "end"
    swapped = [*frames[0:1], frames[2], frames[1], *frames[3:]]
    with pytest.raises(envelope.EnvelopeError):
        list(envelope.FrameReader(key, device.device_id, counter).feed(b"".join(swapped)))
    cut = envelope.FrameReader(key, device.device_id, counter)
    list(cut.feed(b"".join(frames[:-1])))
    assert not cut.done


def test_an_oversized_body_is_refused_before_it_is_opened(site):
    server = site[0]
    huge = b"\x01" + b"\x00" * (1024 * 1024 + 1)
    # An unknown device would be 401: 413 shows the size is checked first, by Content-Length…
    assert post(server, huge, "dev-0000000000000000").status_code == 413

    def chunks():  # …and while a body without Content-Length streams in.
        for _ in range(40):
            yield b"\x00" * 65536

    streamed = httpx.post(
        f"{server.remote}/remote/v1/call", content=chunks(), headers={"X-Device": "x"}, timeout=60
    )
    assert streamed.status_code == 413
    assert server.alive()


def test_roles_and_the_admin_token(site):
    server, _env, _vault, _data, _root = site
    reader = pair_device(site, "phone")
    writer = pair_device(site, "desk", "--write")
    assert DeviceFile.load(writer).role == "write"
    changed = {"paths": ["Animation/Montage.md"]}
    with RemoteClient(reader) as client:
        assert client.call("GET", "/v1/status").status == 200
        for method, path, body in (
            ("GET", "/v1/settings/exclude", None),
            ("PUT", "/v1/settings/exclude", {"exclude": ["Animation"]}),
            ("PUT", "/v1/settings/models", {"model": "x"}),
            ("GET", "/v1/models", None),
            ("POST", "/v1/notes/changed", changed),
            ("DELETE", "/v1/notes", {"paths": ["Animation/Montage.md"]}),
            ("POST", "/v1/devices/pair", {"role": "write"}),
            ("GET", "/v1/devices", None),
            ("GET", "/v1/../v1/settings/exclude", None),
        ):
            answer = client.call(method, path, body)
            assert answer.status == 403, (method, path, answer.body)
            assert answer.json()["code"] == "not_allowed"
    with RemoteClient(writer) as client:
        assert client.call("POST", "/v1/notes/changed", changed).status == 200
        assert client.call("PUT", "/v1/settings/exclude", {"exclude": ["A"]}).status == 403
    admin = {"Authorization": f"Bearer {server.token}"}
    for path in ("/v1/status", "/remote/v1/call", "/remote/v1/hello"):
        assert httpx.get(f"{server.remote}{path}", headers=admin, timeout=10).status_code == 401
    assert httpx.get(f"{server.remote}/v1/status", timeout=10).status_code == 404
    assert (
        httpx.post(f"{server.remote}/v1/search", json={"query": "x"}, timeout=10).status_code == 404
    )
    assert server.client.get("/v1/settings/exclude").status_code == 200  # loopback: as before


def test_a_device_revoked_mid_stream_is_cut_off(site, model, fake):
    server, env, vault, data, _root = site
    out = pair_device(site, "stolen")
    model.overrides["answer"] = ChatReply(content=" ".join(f"word{i}" for i in range(200)))
    fake.chunk_delay = 0.2
    try:
        with RemoteClient(out) as client:
            stream = client.stream("POST", "/v1/ask", {"question": QUESTION})
            revoked_at = None
            with pytest.raises(RemoteError, match="stopped before its end"):
                for kind, value in stream:
                    if kind == "body" and b"event: delta" in value and revoked_at is None:
                        revoked_at = time.monotonic()
                        args = ("--vault", str(vault), "--data-dir", str(data))
                        run(env, "devices", "revoke", "stolen", *args)
    finally:
        fake.chunk_delay = 0.0
        model.overrides.pop("answer", None)
    revoked = [d for d in devices_file(site)["devices"] if d["name"] == "stolen"]
    assert revoked[0]["revoked"] is not None
    done = run(
        env, "search", "Actor", "--remote", server.remote, "--device-file", str(out), check=False
    )
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "refused this device" in done.stderr
    assert server.alive()


def test_an_unreachable_sidecar_is_one_line(site, tmp_path):
    _, env, _, _, _root = site
    out = pair_device(site, "traveller")
    nowhere = f"http://{DEVICE_HOST}:{free_port(DEVICE_HOST)}"
    done = run(env, "search", "x", "--remote", nowhere, "--device-file", str(out), check=False)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert "cannot reach" in done.stderr


def test_the_log_holds_no_code_key_or_question(site):
    server, env, _vault, _data, root = site
    code = new_code(site)["code"]
    out = root / "logcheck.json"
    run(env, "pair", server.remote, code, "--name", "logcheck", "--out", str(out))
    secret_question = "Welche geheime Frage stellt Gerät logcheck?"
    run(
        env,
        "search",
        secret_question,
        "--remote",
        server.remote,
        "--device-file",
        str(out),
        "--json",
    )
    time.sleep(0.5)
    log = server.log.read_text()
    assert "pair" in log  # the log is the server's, and it logged the exchange
    keys_hex = [d["key"] for d in devices_file(site)["devices"]]
    after_start = log.split(server.token, 1)[1]  # `serve` shows a new token once, by design
    for secret in (code, code.replace("-", ""), secret_question, *keys_hex, server.token):
        assert secret not in after_start


def test_a_damaged_devices_file_fails_closed_and_the_owner_keeps_the_loopback(
    tmp_path, sample_vault, fake
):
    vault, data = tmp_path / "vault", tmp_path / "data"
    shutil.copytree(sample_vault, vault)
    data.mkdir(mode=0o700)
    (data / "devices.json").write_text('{"version": 1, "server_id": "srv-x", "devices": [{"id"')
    env = chat_env(fake)
    doctor = run(env, "doctor", "--vault", str(vault), "--data-dir", str(data), check=False)
    assert doctor.returncode == 1 and "devices.json" in doctor.stdout and "damaged" in doctor.stdout
    server = RemoteServe(env, vault, data)
    try:
        assert server.client.get("/v1/status").status_code == 200  # the owner is not locked out
        assert server.client.get("/v1/devices").json()["problem"]
        assert server.client.post("/v1/devices/pair", json={}).status_code == 503
        assert post(server, b"\x01" + b"\x00" * 60, "dev-anything").status_code == 401
        assert server.alive()
    finally:
        server.stop()
    assert (data / "devices.json").read_text().endswith('[{"id"')  # nothing written over it
