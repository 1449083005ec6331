"""The requests running on one server state, so a switch of embedding model can let them finish
before it closes that state's index (`api/embedding_swap.py`).

Every request that uses the state holds a `Lease` from `admit` until its response has been sent
(an answer's stream included): the API's `get_state` and `get_reader_state` dependencies and the
`/mcp` gate take it, nothing else counts. `close` stops admitting (the next request gets 503
`switching`); `drain` waits, from the switch's own thread, until the leases held are given back;
`abort` asks those still running to stop (an answer stream ends with an `error` event), for a
drain that timed out.

Admission and closing share one lock, so a request is either counted before the drain starts
or refused: none slips in between reading the state and closing its index.

A quick read of the old state (`GET /v1/status`, `GET /v1/settings/embeddings`: a few manifest
rows) may still go on during the drain, so the plugin sees the switch in progress, not 503:
`admit_reader` gives it a *peek*, which the drain does not wait for (status polls cannot hold
the switch up); `seal`, called after the drain and before the state closes, refuses new peeks
and waits for those reading.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class NotAdmitted(Exception):
    """No state to serve this request now: the server is starting, or switching its index."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Lease:
    """One request's hold on a state; `release` exactly once (later calls do nothing)."""

    def __init__(self, owner: InFlight, state: Any, peek: bool = False) -> None:
        self.state = state
        self.peek = peek  # a read-only hold the drain does not wait for (`InFlight.peek`)
        self._owner = owner
        self._on_abort: list[Callable[[], None]] = []
        self._released = False

    def on_abort(self, callback: Callable[[], None]) -> None:
        """Call `callback` (from the switch's thread) if the drain gives up on this request;
        at once when it already has."""
        with self._owner._cond:
            if not self._owner._aborted:
                self._on_abort.append(callback)
                return
        _call(callback)

    def release(self) -> None:
        self._owner._leave(self)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class InFlight:
    """The leases held on one state. Thread-safe: requests run on the event loop and in worker
    threads, the switch on its own thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._leases: set[Lease] = set()
        self._peeks: set[Lease] = set()
        self._open = True
        self._sealed = False
        self._aborted = False

    @property
    def running(self) -> int:
        with self._cond:
            return len(self._leases)

    def enter(self, state: Any) -> Lease | None:
        """A lease on `state`; None once `close` has been called."""
        with self._cond:
            if not self._open:
                return None
            lease = Lease(self, state)
            self._leases.add(lease)
            return lease

    def _leave(self, lease: Lease) -> None:
        with self._cond:
            if lease._released:
                return
            lease._released = True
            (self._peeks if lease.peek else self._leases).discard(lease)
            self._cond.notify_all()

    def peek(self, state: Any) -> Lease | None:
        """A hold for a quick read-only request that `drain` does not wait for; None once
        `seal` has been called."""
        with self._cond:
            if self._sealed:
                return None
            lease = Lease(self, state, peek=True)
            self._peeks.add(lease)
            return lease

    def seal(self, timeout: float) -> bool:
        """Admit no more peeks and wait (blocking) until those held are given back; False:
        `timeout` seconds passed first. Called after `drain`, before the state is closed."""
        with self._cond:
            self._open, self._sealed = False, True
            return self._cond.wait_for(lambda: not self._peeks, timeout)

    def close(self) -> None:
        """Admit no more requests; those holding a lease go on."""
        with self._cond:
            self._open = False

    def drain(self, timeout: float) -> bool:
        """Wait (blocking) until no lease is held; False: `timeout` seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._leases, timeout)

    def abort(self) -> int:
        """Ask every request still running to stop; how many there were."""
        with self._cond:
            self._aborted = True
            callbacks = [cb for lease in self._leases for cb in lease._on_abort]
            running = len(self._leases)
        for callback in callbacks:
            _call(callback)
        return running


def _call(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # e.g. the request's event loop has stopped: nothing left to stop
        log.debug("abort callback failed", exc_info=True)


def admit(app_state: Any) -> Lease:
    """A lease on the server state in use (`app.state.server`), or `NotAdmitted`: 503
    `starting` before the first state opens, `switching` while a switch of embedding model
    drains the old state or opens the new one."""
    state = getattr(app_state, "server", None)
    switching = getattr(app_state, "switching", None)
    lease = state.in_flight.enter(state) if state is not None else None
    if lease is not None:
        return lease
    if switching or state is not None:  # a closed state: its switch is under way
        raise NotAdmitted("switching", switching or "switching the embedding model")
    raise NotAdmitted("starting", "the server is still starting")


def admit_reader(app_state: Any) -> Lease:
    """As `admit`, for a quick read-only request: while a switch drains the old state (closed
    to new requests, not yet sealed) a peek on it instead of 503 `switching`."""
    try:
        return admit(app_state)
    except NotAdmitted as exc:
        state = getattr(app_state, "server", None)
        draining = exc.code == "switching" and state is not None
        lease = state.in_flight.peek(state) if draining else None
        if lease is None:
            raise
        return lease
