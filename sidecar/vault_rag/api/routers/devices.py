"""`/v1/devices`: pairing codes, the paired devices and their revocation (issue 41,
docs/remote.md). Loopback only, with the admin token: the remote listener never forwards here.
They read the app's `remote` hub (`app.state.remote`, set by `serve --remote-listen`), not the
server state, so they answer during a switch of embedding model too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request

from vault_rag.api.device_schemas import (
    DeviceInfo,
    DeviceList,
    DevicesRevoked,
    PairCode,
    PairRequest,
)
from vault_rag.api.errors import ApiError
from vault_rag.remote.devices import DevicesError, DeviceStore

router = APIRouter(prefix="/devices", tags=["devices"])


def _hub(request: Request) -> Any:
    return getattr(request.app.state, "remote", None)


def _store(request: Request) -> DeviceStore:
    hub = _hub(request)
    if hub is not None:
        return hub.store  # type: ignore[no-any-return]
    settings = request.app.state.open_args[0]
    return DeviceStore(Path(settings.resolved_data_dir()))


@router.post("/pair", response_model=PairCode, summary="A one-time code to pair a device")
def pair(body: PairRequest, request: Request) -> PairCode:
    """A new code (the last one, if any, stops working). 409 `remote_off` when the sidecar
    runs without a remote listener; 503 `devices_damaged` when the devices file is damaged."""
    hub = _hub(request)
    if hub is None:
        raise ApiError(
            409,
            "remote_off",
            "the remote listener is off: start the sidecar with `--remote-listen HOST:PORT` "
            "(or the `server_remote_listen` setting)",
        )
    try:
        code, expires = hub.pairing.new_code(body.role)
    except DevicesError as exc:
        raise ApiError(503, "devices_damaged", str(exc)) from exc
    return PairCode(code=code, expires_at=round(expires, 3), remote_url=hub.url, role=body.role)


@router.get("", response_model=DeviceList, summary="The paired devices")
def list_devices(request: Request) -> DeviceList:
    store = _store(request)
    hub = _hub(request)
    url = hub.url if hub is not None else None
    try:
        devices = [DeviceInfo(**d) for d in store.listing()]
    except DevicesError as exc:
        return DeviceList(devices=[], remote_url=url, problem=str(exc))
    return DeviceList(devices=devices, remote_url=url)


@router.delete("/{device}", response_model=DevicesRevoked, summary="Revoke a device")
async def revoke(device: str, request: Request) -> DevicesRevoked:
    """Revoke the active devices with that name (or id): their requests are refused from now
    on, a stream under way stops. 404 when none matches."""
    store = _store(request)
    try:
        hits = await asyncio.to_thread(store.revoke, device)
    except DevicesError as exc:
        raise ApiError(503, "devices_damaged", str(exc)) from exc
    if not hits:
        raise ApiError(404, "no_device", f"no paired device named {device!r}")
    return DevicesRevoked(revoked=[DeviceInfo(**d.public()) for d in hits])
