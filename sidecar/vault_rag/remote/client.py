"""The device's side of the remote protocol (docs/remote.md), for `vault-rag pair` and
`vault-rag search|ask --remote URL --device-file FILE`, and for the tests and the benchmark.

The device file (JSON, mode 0600, replaced atomically) holds the remote URL, the server id,
the device id, name and role, the device key, and the last counter used. Each call takes the
next counter under an exclusive lock on the file and writes it back *before* the request is
sent, so counters only ever grow, across runs and processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from vault_rag.remote import envelope, keys, spake2

TIMEOUT = httpx.Timeout(120.0, connect=10.0)


class RemoteError(RuntimeError):
    """One line for people: what failed and what to do."""


@dataclass
class DeviceFile:
    url: str
    server_id: str
    device_id: str
    name: str
    role: str
    key: str  # hex
    counter: int = 0

    @classmethod
    def load(cls, path: Path) -> DeviceFile:
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except OSError as exc:
            raise RemoteError(f"cannot read the device file {path}: {exc.strerror or exc}") from exc
        except (ValueError, TypeError) as exc:
            raise RemoteError(f"the device file {path} is damaged ({exc})") from exc

    def save(self, path: Path) -> None:
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(asdict(self), handle, indent=1)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)


def _refusal(response: httpx.Response) -> str:
    try:
        body = response.json()
        return f"{body.get('message') or body.get('code')} (HTTP {response.status_code})"
    except ValueError:
        return f"HTTP {response.status_code}"


def _post_json(client: httpx.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
    try:
        response = client.post(url, json=body)
    except httpx.HTTPError as exc:
        raise RemoteError(f"cannot reach {url}: {exc}") from exc
    if response.status_code != 200:
        raise RemoteError(f"pairing refused by the sidecar: {_refusal(response)}")
    data = response.json()
    if not isinstance(data, dict):
        raise RemoteError("the sidecar sent an answer this version cannot read")
    return data


def pair(url: str, code: str, name: str) -> DeviceFile:
    """Pair with the sidecar's remote listener at `url` using the owner's one-time `code`."""
    base = url.rstrip("/")
    device = spake2.Device.new(name, code)
    with httpx.Client(timeout=TIMEOUT, trust_env=False) as client:
        started = _post_json(
            client, f"{base}/remote/v1/pair/start", {"name": name, "pA": device.start().hex()}
        )
        try:
            server_id = str(started["server_id"])
            pair_id = str(started["pair_id"])
            derived = device.finish(server_id.encode(), bytes.fromhex(started["pB"]))
            confirm_b = bytes.fromhex(started["confirm_b"])
        except (KeyError, ValueError, TypeError, spake2.PakeError) as exc:
            raise RemoteError(f"the sidecar's pairing answer is invalid ({exc})") from exc
        if not spake2.same(confirm_b, derived.confirm_b):
            raise RemoteError(
                "pairing failed: wrong code (or someone else answered); ask the desktop for a "
                "new code"
            )
        finished = _post_json(
            client,
            f"{base}/remote/v1/pair/finish",
            {"pair_id": pair_id, "confirm_a": derived.confirm_a.hex()},
        )
    try:
        reply = envelope.open_pair_reply(derived.ke, pair_id, bytes.fromhex(finished["sealed"]))
    except (KeyError, ValueError, envelope.EnvelopeError) as exc:
        raise RemoteError("the sidecar's pairing reply does not authenticate") from exc
    return DeviceFile(
        url=base,
        server_id=server_id,
        device_id=str(reply["device_id"]),
        name=str(reply["name"]),
        role=str(reply["role"]),
        key=keys.device_key(derived.ke).hex(),
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    if os.name != "posix":
        yield
        return
    import fcntl

    with open(path, "rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def next_counter(path: Path) -> tuple[DeviceFile, int]:
    """The device file and its next counter, already written back."""
    with _locked(path):
        device = DeviceFile.load(path)
        device.counter += 1
        device.save(path)
    return device, device.counter


@dataclass
class Answer:
    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class RemoteClient:
    """Sealed calls with the credentials in `path` (the device file)."""

    def __init__(self, path: Path, url: str | None = None) -> None:
        self.path = path
        self.url = url
        self.http = httpx.Client(timeout=TIMEOUT, trust_env=False)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> RemoteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stream(
        self, method: str, path: str, body: Any = None, query: str = ""
    ) -> Iterator[tuple[str, Any]]:
        """("head", {status, content_type}), then ("body", bytes)… as they arrive. Raises
        `RemoteError` when the answer is refused, does not authenticate, or stops early."""
        device, counter = next_counter(self.path)
        base = (self.url or device.url).rstrip("/")
        message = {
            "method": method,
            "path": path,
            "query": query,
            "body": body,
            "ts": int(time.time()),
        }
        key = bytes.fromhex(device.key)
        sealed = envelope.seal_request(key, device.device_id, counter, message)
        headers = {"X-Device": device.device_id, "Content-Type": "application/octet-stream"}
        reader = envelope.FrameReader(key, device.device_id, counter)
        try:
            with self.http.stream(
                "POST", f"{base}/remote/v1/call", content=sealed, headers=headers
            ) as response:
                if response.status_code != 200:
                    response.read()
                    raise RemoteError(_call_refusal(base, response))
                for chunk in response.iter_bytes():
                    for kind, value in reader.feed(chunk):
                        if kind != "end":
                            yield kind, value
        except httpx.HTTPError as exc:
            raise RemoteError(f"cannot reach the sidecar at {base}: {exc}") from exc
        except envelope.EnvelopeError as exc:
            raise RemoteError(
                f"the sidecar's answer does not authenticate ({exc}); nothing of it was used"
            ) from exc
        if not reader.done:
            raise RemoteError(
                "the answer stopped before its end (the device may have been revoked, or the "
                "sidecar stopped)"
            )

    def call(self, method: str, path: str, body: Any = None, query: str = "") -> Answer:
        head: dict[str, Any] = {}
        parts: list[bytes] = []
        for kind, value in self.stream(method, path, body, query):
            if kind == "head":
                head = value
            else:
                parts.append(value)
        status, content_type = int(head.get("status", 0)), str(head.get("content_type", ""))
        return Answer(status, content_type, b"".join(parts))


def _call_refusal(base: str, response: httpx.Response) -> str:
    if response.status_code == 401:
        return (
            f"the sidecar at {base} refused this device (revoked, unknown, or its messages do "
            "not authenticate); pair again with `vault-rag pair`"
        )
    return f"the sidecar at {base} refused the request: {_refusal(response)}"
