"""`serving/in_flight.py`: the leases a switch of embedding model drains (no clock involved; the
live-server behaviour is in `tests/test_embedding_switch_drain.py`)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from vault_rag.serving.in_flight import InFlight, NotAdmitted, admit, admit_reader


def app_state(server: object = None, switching: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(server=server, switching=switching)


def test_admission_closes_atomically_and_the_drain_waits_for_the_held_leases():
    state = SimpleNamespace(in_flight=InFlight())
    held = admit(app_state(state))
    assert held.state is state and state.in_flight.running == 1
    state.in_flight.close()
    with pytest.raises(NotAdmitted) as refused:
        admit(app_state(state, switching="switching the embedding model: finishing"))
    assert refused.value.code == "switching" and "finishing" in refused.value.message
    assert state.in_flight.drain(0) is False  # one still held

    drained = threading.Event()
    waiter = threading.Thread(target=lambda: state.in_flight.drain(60) and drained.set())
    waiter.start()
    held.release()
    held.release()  # a second release changes nothing
    waiter.join(60)
    assert drained.is_set() and state.in_flight.running == 0


def test_no_state_is_starting_or_switching():
    with pytest.raises(NotAdmitted) as starting:
        admit(app_state())
    assert starting.value.code == "starting"
    with pytest.raises(NotAdmitted) as switching:
        admit(app_state(switching="opening the new index"))
    assert (switching.value.code, switching.value.message) == ("switching", "opening the new index")


def test_abort_tells_the_leases_still_held_and_any_that_asks_later():
    flight = InFlight()
    first, second = flight.enter("s"), flight.enter("s")
    assert first is not None and second is not None
    told: list[str] = []
    first.on_abort(lambda: told.append("first"))
    second.on_abort(lambda: 1 / 0)  # a failing callback does not stop the others
    assert flight.abort() == 2
    assert told == ["first"]
    second.release()
    first.on_abort(lambda: told.append("late"))  # registered after the abort: called at once
    assert told == ["first", "late"]
    with first:
        pass
    assert flight.running == 0 and flight.drain(0) is True


def test_a_status_read_during_the_drain_peeks_without_holding_it_up():
    state = SimpleNamespace(in_flight=InFlight())
    held = admit(app_state(state))
    state.in_flight.close()
    draining = app_state(state, switching="switching the embedding model: finishing")
    with pytest.raises(NotAdmitted):
        admit(draining)  # any other request: 503 `switching`
    peek = admit_reader(draining)
    assert peek.state is state and peek.peek and state.in_flight.running == 1
    held.release()
    assert state.in_flight.drain(0) is True  # the peek still held does not count

    sealed = threading.Event()
    waiter = threading.Thread(target=lambda: state.in_flight.seal(60) and sealed.set())
    waiter.start()
    refused = None
    while refused is None:  # once the seal has begun, no new peek
        try:
            admit_reader(draining).release()
        except NotAdmitted as exc:
            refused = exc
        assert waiter.is_alive()
        time.sleep(0.005)
    assert refused.code == "switching"
    assert not sealed.is_set()  # the state is not closed under the status read still held
    peek.release()
    waiter.join(60)
    assert sealed.is_set()


def test_a_reader_gets_no_peek_without_a_state_or_while_starting():
    with pytest.raises(NotAdmitted) as starting:
        admit_reader(app_state())
    assert starting.value.code == "starting"
    with pytest.raises(NotAdmitted) as opening:  # the old state closed, the new one opening
        admit_reader(app_state(switching="opening the new index"))
    assert opening.value.code == "switching"
    state = SimpleNamespace(in_flight=InFlight())
    lease = admit_reader(app_state(state))  # a state in use: an ordinary lease
    assert not lease.peek and state.in_flight.running == 1
    assert state.in_flight.drain(0) is False
    lease.release()
