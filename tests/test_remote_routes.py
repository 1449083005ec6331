"""Issue 41: `/v1/devices` on a server started without a remote listener (the module's real
uvicorn server, conftest `live`): pairing says the listener is off, the list and revocation
work on the data dir's file, and every route wants the admin token."""

from __future__ import annotations

import httpx

from vault_rag.remote.devices import DeviceStore

SERVER_SETTINGS = {"server_watch": False}


def test_pairing_needs_the_remote_listener(live, client):
    answer = client.post("/v1/devices/pair", json={"role": "read"})
    assert answer.status_code == 409 and answer.json()["code"] == "remote_off"
    assert "--remote-listen" in answer.json()["message"]
    listed = client.get("/v1/devices").json()
    assert listed == {"devices": [], "remote_url": None, "problem": None}


def test_devices_are_listed_and_revoked_from_the_file(live, client):
    data = live.state.index.data_dir
    DeviceStore(data).add("tablet", "write", b"k" * 32)
    [device] = client.get("/v1/devices").json()["devices"]
    assert (device["name"], device["role"], device["revoked"]) == ("tablet", "write", None)
    assert "key" not in device
    revoked = client.delete("/v1/devices/tablet").json()["revoked"]
    assert revoked[0]["revoked"] is not None
    assert DeviceStore(data).get(device["id"]) is None
    assert client.delete("/v1/devices/tablet").status_code == 404


def test_the_devices_routes_want_the_token(live):
    for method, path in (
        ("GET", "/v1/devices"),
        ("POST", "/v1/devices/pair"),
        ("DELETE", "/v1/devices/x"),
    ):
        assert httpx.request(method, f"{live.url}{path}", json={}, timeout=30).status_code == 401
