"""Pairing another device with a one-time code (docs/remote.md, "Pairing").

The owner asks the loopback listener for a code (`POST /v1/devices/pair`, admin token): eight
digits, valid for `remote_pair_code_ttl` seconds and one pairing; only w (the SPAKE2 scalar
derived from it) is kept, in memory, and a new code replaces the last one. The device then runs
SPAKE2 with the remote listener:

1. `pair/start` {name, pA} → {pair_id, server_id, pB, confirm_b}. This *consumes* the code:
   whatever happens next, it cannot start another exchange. So each code allows one online
   guess, and an attacker who checks `confirm_b` offline against a guess learns about that one
   guess only.
2. `pair/finish` {pair_id, confirm_a} → the device is stored only when `confirm_a` verifies;
   the reply (device id, role, server id) is sealed with a key from Ke. A wrong `confirm_a`
   ends the exchange (the code is already spent).

Every start and finish counts against a global limit (`remote_pair_attempts_per_minute`):
over it, 429 with Retry-After. Refused exchanges store nothing.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vault_rag.remote import envelope, keys, spake2
from vault_rag.remote.devices import ROLES, DevicesError, DeviceStore

CODE_DIGITS = 8
SESSION_TTL = 120.0  # seconds between start and finish
MAX_NAME = 64


class PairingRefused(Exception):
    def __init__(self, status: int, code: str, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


REFUSED = (
    "pairing refused: the code is wrong, expired or already used; ask the desktop for a new "
    "one (`vault-rag devices pair`)"
)


@dataclass
class _Code:
    w: bytes
    role: str
    expires: float  # monotonic


@dataclass
class _Session:
    name: str
    role: str
    keys: spake2.Keys
    expires: float  # monotonic


class RateLimit:
    """At most `per_minute` attempts in any 60 seconds, for the whole listener."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self.times: deque[float] = deque()

    def take(self) -> int:
        """0 when this attempt may go on, else the seconds to wait (it is not counted)."""
        now = self.clock()
        while self.times and now - self.times[0] >= 60.0:
            self.times.popleft()
        if len(self.times) >= self.per_minute:
            return max(1, int(60.0 - (now - self.times[0])) + 1)
        self.times.append(now)
        return 0


def check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise PairingRefused(400, "bad_request", "the device needs a name")
    name = name.strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise PairingRefused(
            400, "bad_request", f"a device name is 1 to {MAX_NAME} printable characters"
        )
    return name


def _hex(value: Any, size: int, what: str) -> bytes:
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != size:
        raise PairingRefused(400, "bad_request", f"{what} must be {size} bytes in hex")
    return raw


class Pairing:
    def __init__(
        self,
        store: DeviceStore,
        *,
        code_ttl: float = 300.0,
        attempts_per_minute: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.code_ttl = code_ttl
        self.clock = clock
        self.limit = RateLimit(attempts_per_minute, clock)
        self.lock = threading.Lock()
        self.code: _Code | None = None
        self.sessions: dict[str, _Session] = {}

    # -- the owner's side (loopback) ------------------------------------------------------------
    def new_code(self, role: str = "read") -> tuple[str, float]:
        """(code, its expiry in Unix seconds). Replaces any code or exchange under way."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}")
        if self.store.problem is not None:
            raise DevicesError(self.store.problem)
        digits = "".join(secrets.choice("0123456789") for _ in range(CODE_DIGITS))
        with self.lock:
            self.code = _Code(spake2.password_scalar(digits), role, self.clock() + self.code_ttl)
            self.sessions.clear()
        return f"{digits[:4]}-{digits[4:]}", time.time() + self.code_ttl

    # -- the device's side (remote listener) ----------------------------------------------------
    def _attempt(self) -> None:
        wait = self.limit.take()
        if wait:
            raise PairingRefused(
                429, "too_many_attempts", "too many pairing attempts; wait and retry", wait
            )

    def start(self, body: Any) -> dict[str, Any]:
        self._attempt()
        if not isinstance(body, dict):
            raise PairingRefused(400, "bad_request", "a JSON object is expected")
        name = check_name(body.get("name"))
        p_a = _hex(body.get("pA"), spake2.POINT_BYTES, "pA")
        if self.store.problem is not None:
            raise PairingRefused(503, "devices_damaged", "the sidecar cannot pair devices now")
        if name in self.store.names():
            raise PairingRefused(
                409, "name_taken", f"a device named {name!r} is paired; revoke it or pick another"
            )
        with self.lock:
            code, now = self.code, self.clock()
            if code is None or now > code.expires:
                self.code = None
                raise PairingRefused(401, "pairing_refused", REFUSED)
            try:
                p_b, derived = spake2.respond(
                    name.encode("utf-8"), self.store.server_id.encode(), code.w, p_a
                )
            except spake2.PakeError as exc:
                raise PairingRefused(400, "bad_request", str(exc)) from exc
            self.code = None  # one exchange per code, whatever comes next
            pair_id = "pair-" + secrets.token_hex(8)
            self.sessions = {pair_id: _Session(name, code.role, derived, now + SESSION_TTL)}
        return {
            "pair_id": pair_id,
            "server_id": self.store.server_id,
            "pB": p_b.hex(),
            "confirm_b": derived.confirm_b.hex(),
        }

    def finish(self, body: Any) -> dict[str, Any]:
        self._attempt()
        if not isinstance(body, dict) or not isinstance(body.get("pair_id"), str):
            raise PairingRefused(400, "bad_request", "pair_id and confirm_a are expected")
        pair_id = body["pair_id"]
        confirm = _hex(body.get("confirm_a"), 64, "confirm_a")
        with self.lock:
            session = self.sessions.pop(pair_id, None)
        if session is None or self.clock() > session.expires:
            raise PairingRefused(401, "pairing_refused", REFUSED)
        if not spake2.same(confirm, session.keys.confirm_a):
            raise PairingRefused(401, "pairing_refused", REFUSED)
        try:
            device = self.store.add(session.name, session.role, keys.device_key(session.keys.ke))
        except DevicesError as exc:
            raise PairingRefused(503, "devices_damaged", str(exc)) from exc
        reply = {
            "device_id": device.id,
            "name": device.name,
            "role": device.role,
            "server_id": self.store.server_id,
        }
        sealed = envelope.seal_pair_reply(session.keys.ke, pair_id, reply)
        return {"pair_id": pair_id, "sealed": sealed.hex()}


@dataclass
class RemoteHub:
    """What the loopback app needs of a running remote listener (`app.state.remote`)."""

    store: DeviceStore
    pairing: Pairing
    url: str  # http://HOST:PORT, as a device reaches it
