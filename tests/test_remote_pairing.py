"""Issue 41: pairing codes (expiry, one exchange per code), the pairing rate limit over real
HTTP (the gateway on a real uvicorn server on 127.0.0.2), and the devices file (0600, atomic,
fails closed when damaged, never written over). The end-to-end paths are in
tests/test_remote_live.py."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn

from vault_rag.remote import spake2
from vault_rag.remote.devices import DevicesError, DeviceStore, devices_problem
from vault_rag.remote.gateway import Gateway, allowed
from vault_rag.remote.pairing import Pairing, PairingRefused


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def start(pairing: Pairing, code: str, name: str = "phone") -> tuple[spake2.Device, dict]:
    device = spake2.Device.new(name, code)
    return device, pairing.start({"name": name, "pA": device.start().hex()})


def finish(pairing: Pairing, device: spake2.Device, started: dict) -> dict:
    keys = device.finish(started["server_id"].encode(), bytes.fromhex(started["pB"]))
    assert spake2.same(keys.confirm_b, bytes.fromhex(started["confirm_b"]))
    return pairing.finish({"pair_id": started["pair_id"], "confirm_a": keys.confirm_a.hex()})


def test_a_code_pairs_once(tmp_path: Path) -> None:
    store = DeviceStore(tmp_path)
    pairing = Pairing(store)
    code, expires = pairing.new_code("write")
    assert expires > time.time() and len(code.replace("-", "")) == 8
    device, started = start(pairing, code)
    finish(pairing, device, started)
    [paired] = store.devices.values()
    assert (paired.name, paired.role) == ("phone", "write")
    assert stat.S_IMODE((tmp_path / "devices.json").stat().st_mode) == 0o600
    with pytest.raises(PairingRefused) as refused:
        start(pairing, code, "tablet")
    assert refused.value.status == 401
    assert len(store.devices) == 1


def test_an_expired_code_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    clock = Clock()
    store = DeviceStore(tmp_path)
    pairing = Pairing(store, code_ttl=300, clock=clock)
    code, _ = pairing.new_code()
    clock.now += 301
    with pytest.raises(PairingRefused) as refused:
        start(pairing, code)
    assert refused.value.status == 401
    assert not (tmp_path / "devices.json").exists()


def test_a_late_finish_is_refused(tmp_path: Path) -> None:
    clock = Clock()
    store = DeviceStore(tmp_path)
    pairing = Pairing(store, clock=clock)
    code, _ = pairing.new_code()
    device, started = start(pairing, code)
    clock.now += 600
    with pytest.raises(PairingRefused):
        finish(pairing, device, started)
    assert not (tmp_path / "devices.json").exists()


def test_a_new_code_replaces_the_last(tmp_path: Path) -> None:
    pairing = Pairing(DeviceStore(tmp_path))
    old, _ = pairing.new_code()
    new, _ = pairing.new_code()
    device, started = start(pairing, old)  # the server cannot tell: the device can
    keys = device.finish(started["server_id"].encode(), bytes.fromhex(started["pB"]))
    assert not spake2.same(keys.confirm_b, bytes.fromhex(started["confirm_b"]))
    with pytest.raises(PairingRefused):  # and a confirmation from the old code is refused
        pairing.finish({"pair_id": started["pair_id"], "confirm_a": keys.confirm_a.hex()})
    # That exchange spent the new code (one exchange per code, whoever starts it).
    with pytest.raises(PairingRefused):
        start(pairing, new)


def test_the_devices_file_fails_closed_when_damaged(tmp_path: Path) -> None:
    store = DeviceStore(tmp_path)
    pairing = Pairing(store)
    device, started = start(pairing, pairing.new_code()[0])
    finish(pairing, device, started)
    [paired] = store.devices.values()
    path = tmp_path / "devices.json"
    for damage in (b"", b"{", b'{"version": 2}', path.read_bytes().replace(b'"read"', b'"root"')):
        path.write_bytes(damage)
        spoiled = DeviceStore(tmp_path)
        assert spoiled.problem and devices_problem(tmp_path)
        assert spoiled.get(paired.id) is None
        with pytest.raises(DevicesError):
            spoiled.add("x", "read", b"k" * 32)
        with pytest.raises(DevicesError):
            Pairing(spoiled).new_code()
        assert path.read_bytes() == damage  # never written over


def test_a_loose_devices_file_is_tightened(tmp_path: Path) -> None:
    store = DeviceStore(tmp_path)
    store.add("a", "read", b"k" * 32)
    path = tmp_path / "devices.json"
    os.chmod(path, 0o644)
    assert DeviceStore(tmp_path).get(next(iter(store.devices)))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_allow_list() -> None:
    assert allowed("read", "POST", "/v1/search")
    assert allowed("read", "GET", "/v1/threads/abc-123")
    assert allowed("read", "POST", "/v1/answers/a1/feedback")
    assert not allowed("read", "POST", "/v1/answers/a1/promote")
    assert allowed("write", "POST", "/v1/answers/a1/promote")
    for path in (
        "/v1/settings/exclude",
        "/v1/settings/models",
        "/v1/settings/embeddings",
        "/v1/models",
        "/v1/devices",
        "/v1/devices/pair",
        "/v1/sources",
        "/v1/sources/docs",
        "/mcp",
        "/v1/threads/../x",
        "/v1/search/",
        "/v1//search",
    ):
        for role in ("read", "write"):
            for method in ("GET", "POST", "PUT", "DELETE"):
                assert not allowed(role, method, path), (role, method, path)


# -- the rate limit, over real HTTP ------------------------------------------------------------
async def nothing(
    scope: object, receive: object, send: object
) -> None:  # the loopback app is never reached here
    raise AssertionError("forwarded")


@contextlib.contextmanager
def serve(app) -> object:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.2", 0))
    except OSError:  # macOS: only 127.0.0.1 unless an alias is added
        sock.close()
        pytest.skip("127.0.0.2 is not a loopback address here")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: server.run(sockets=[sock]), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.2:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def test_a_flood_of_pairing_tries_is_rate_limited_and_stores_nothing(tmp_path: Path) -> None:
    store = DeviceStore(tmp_path)
    pairing = Pairing(store, attempts_per_minute=3)
    gateway = Gateway(store, pairing, nothing, lambda: "admin-token")
    code, _ = pairing.new_code()
    with serve(gateway) as url, httpx.Client(base_url=url, timeout=30) as client:
        wrong = spake2.Device.new("mallory", "00000000")
        answers = [
            client.post(
                "/remote/v1/pair/start", json={"name": "mallory", "pA": wrong.start().hex()}
            )
            for _ in range(6)
        ]
        assert [a.status_code for a in answers[:3]] == [200, 401, 401]
        assert all(a.status_code == 429 for a in answers[3:])
        assert int(answers[3].headers["retry-after"]) >= 1
        assert answers[3].json()["code"] == "too_many_attempts"
        right = spake2.Device.new("phone", code)
        late = client.post(
            "/remote/v1/pair/start", json={"name": "phone", "pA": right.start().hex()}
        )
        assert late.status_code == 429
        assert client.get("/remote/v1/hello").status_code == 200  # the listener is still up
    assert not (tmp_path / "devices.json").exists()


def test_cors_for_the_mobile_plugin_and_no_one_else(tmp_path: Path) -> None:
    store = DeviceStore(tmp_path)
    gateway = Gateway(store, Pairing(store), nothing, lambda: "admin-token")
    with serve(gateway) as url, httpx.Client(base_url=url, timeout=30) as client:
        preflight = client.options(
            "/remote/v1/call",
            headers={
                "Origin": "capacitor://localhost",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-device, content-type",
                "Access-Control-Request-Private-Network": "true",
            },
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "capacitor://localhost"
        assert "x-device" in preflight.headers["access-control-allow-headers"]
        assert preflight.headers["access-control-allow-private-network"] == "true"
        hello = client.get("/remote/v1/hello", headers={"Origin": "app://obsidian.md"})
        assert hello.headers["access-control-allow-origin"] == "app://obsidian.md"
        evil = client.get("/remote/v1/hello", headers={"Origin": "https://evil.example"})
        assert evil.status_code == 403 and "access-control-allow-origin" not in evil.headers
