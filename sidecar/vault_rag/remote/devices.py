"""The paired devices, in the data dir's `devices.json` (mode 0600, replaced atomically).

    {"version": 1, "server_id": "srv-…", "devices": [
        {"id", "name", "role": "read" | "write", "key": hex, "created", "last_seen",
         "revoked", "counter", "window"}]}

`key` is the device key itself (the sidecar must hold it to open the device's messages): a
copy of the data dir lets its holder speak as every paired device (docs/remote.md). `counter`
and `window` are the replay window (`envelope.ReplayWindow`), written with `last_seen` on every
accepted request, so a restart does not reopen old counters. Times are Unix seconds.

A file that cannot be read as this shape is *damaged*: every device is refused (the remote
listener fails closed), nothing is written over it, `vault-rag doctor` says so, and the
loopback listener is not affected.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from vault_rag.remote.envelope import ReplayWindow

DEVICES_FILE = "devices.json"
ROLES = ("read", "write")
Role = Literal["read", "write"]


class DevicesError(RuntimeError):
    """The devices file is damaged (or cannot be written): nothing was changed."""


@dataclass
class Device:
    id: str
    name: str
    role: str
    key: str  # hex
    created: float
    last_seen: float | None = None
    revoked: float | None = None
    counter: int = 0
    window: int = 0

    @property
    def active(self) -> bool:
        return self.revoked is None

    @property
    def key_bytes(self) -> bytes:
        return bytes.fromhex(self.key)

    def public(self) -> dict[str, Any]:
        """What may be shown: everything but the key and the replay state."""
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role,
            "created": self.created,
            "last_seen": self.last_seen,
            "revoked": self.revoked,
        }


def devices_path(data_dir: Path) -> Path:
    return data_dir / DEVICES_FILE


def devices_problem(data_dir: Path) -> str | None:
    """Why the devices file cannot be used (None: absent or sound). For `vault-rag doctor`."""
    try:
        _read(devices_path(data_dir))
    except DevicesError as exc:
        return str(exc)
    return None


def _read(path: Path) -> tuple[str | None, list[Device]]:
    if not path.exists():
        return None, []
    try:
        if os.name == "posix" and stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(0o600)
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != 1:
            raise ValueError("not a version 1 devices file")
        server_id = data["server_id"]
        if not isinstance(server_id, str) or not server_id:
            raise ValueError("no server id")
        devices = [_device(item) for item in data["devices"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DevicesError(
            f"the devices file {path} is damaged ({exc}); no other device is let in until it "
            "is fixed or removed (removing it unpairs every device)"
        ) from exc
    return server_id, devices


def _device(item: Any) -> Device:
    device = Device(**item)
    if device.role not in ROLES or len(bytes.fromhex(device.key)) != 32:
        raise ValueError(f"device {device.id!r} has a bad role or key")
    if not isinstance(device.counter, int) or not isinstance(device.window, int):
        raise ValueError(f"device {device.id!r} has a bad counter")
    return device


class DeviceStore:
    """The file's contents in memory, every change written through. Thread-safe."""

    def __init__(self, data_dir: Path) -> None:
        self.path = devices_path(data_dir)
        self.lock = threading.Lock()
        self.problem: str | None = None
        self.server_id = ""
        self.devices: dict[str, Device] = {}
        self.reload()

    def reload(self) -> None:
        with self.lock:
            try:
                server_id, devices = _read(self.path)
            except DevicesError as exc:
                self.problem, self.devices = str(exc), {}
                return
            self.problem = None
            self.server_id = server_id or "srv-" + secrets.token_hex(8)
            self.devices = {d.id: d for d in devices}

    def _check(self) -> None:
        if self.problem is not None:
            raise DevicesError(self.problem)

    def _save(self, durable: bool) -> None:
        data = {
            "version": 1,
            "server_id": self.server_id,
            "devices": [asdict(d) for d in self.devices.values()],
        }
        temp = self.path.with_name(f".{DEVICES_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1)
                handle.write("\n")
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise DevicesError(f"cannot write {self.path}: {exc.strerror or exc}") from exc

    def names(self) -> set[str]:
        with self.lock:
            return {d.name for d in self.devices.values() if d.active}

    def add(self, name: str, role: str, key: bytes) -> Device:
        with self.lock:
            self._check()
            device = Device(
                id="dev-" + secrets.token_hex(8),
                name=name,
                role=role,
                key=key.hex(),
                created=round(time.time(), 3),
            )
            self.devices[device.id] = device
            try:
                self._save(durable=True)
            except DevicesError:
                del self.devices[device.id]
                raise
            return device

    def get(self, device_id: str) -> Device | None:
        """The active device with that id; None when unknown, revoked, or the file damaged."""
        with self.lock:
            if self.problem is not None:
                return None
            device = self.devices.get(device_id)
            return device if device is not None and device.active else None

    def is_active(self, device_id: str) -> bool:
        return self.get(device_id) is not None

    def fresh(self, device: Device, counter: int) -> bool:
        with self.lock:
            return ReplayWindow(device.counter, device.window).fresh(counter)

    def accept(self, device: Device, counter: int) -> bool:
        """Record a request's counter and the time (False: a replay, or the device went)."""
        with self.lock:
            if self.problem is not None or not device.active:
                return False
            window = ReplayWindow(device.counter, device.window)
            if not window.fresh(counter):
                return False
            window.accept(counter)
            device.counter, device.window = window.highest, window.bitmap
            device.last_seen = round(time.time(), 3)
            self._save(durable=False)
            return True

    def revoke(self, name_or_id: str) -> list[Device]:
        """Revoke the active devices with that name (or id); the list of those revoked."""
        with self.lock:
            self._check()
            hits = [d for d in self.devices.values() if d.active and name_or_id in (d.name, d.id)]
            now = round(time.time(), 3)
            for device in hits:
                device.revoked = now
            if hits:
                self._save(durable=True)
            return hits

    def listing(self) -> list[dict[str, Any]]:
        with self.lock:
            self._check()
            return [d.public() for d in self.devices.values()]
