"""The feedback prior on synthetic fused lists: what it moves, by how much at most, and decay.

`hybrid_search` runs for real over a fake index whose two retrievers return fixed rankings, so
the fused scores are known exactly (RRF, k = 10: rank r alone scores 1 / (11 + r))."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault_rag.chunking.types import Chunk
from vault_rag.feedback.answers import record_answer
from vault_rag.feedback.prior import DAY_SECONDS, FeedbackPrior, PriorConfig, decay, signal
from vault_rag.feedback.store import FeedbackStore, Vote, submit_feedback
from vault_rag.retrieval.hybrid import (
    MAX_PRIOR_WEIGHT,
    SearchOptions,
    SearchResult,
    apply_prior,
    hybrid_search,
)

B = 0.1  # the default prior weight


def chunk(chunk_id: str) -> Chunk:
    return Chunk(
        id=chunk_id,
        note_path=f"{chunk_id}.md",  # one note each: the per-note cap never interferes
        text=f"text of {chunk_id}",
        embed_text=f"text of {chunk_id}",
        content_hash=chunk_id,
        hierarchy_path="",
        anchor="",
        line_start=1,
        line_end=1,
        has_code=False,
        size=3,
        title=chunk_id,
        origin=f"{chunk_id}.md",
    )


class FakeIndex:
    """Just what `hybrid_search` touches: two fixed rankings and their chunks. It plays the
    vector store, the provider, the manifest, the lexical index and the note centroids (it
    has none: the note signal is measured in test_note_vectors.py) at once."""

    def __init__(self, dense: list[str], lexical: list[str] | None = None) -> None:
        self.dense_ids, self.lexical_ids = dense, lexical or []
        self.store = self.provider = self.manifest = self.lexical = self.note_vectors = self
        self.vault_root = Path("/nonexistent")
        self.known = {i: chunk(i) for i in [*self.dense_ids, *self.lexical_ids, "outsider"]}

    def count(self) -> int:
        return len(self.dense_ids)

    def rank(self, *args: object, **kwargs: object) -> list[tuple[str, float]]:
        return []  # no note centroids

    def mean(self) -> None:
        return None  # no corpus mean: the dense list is not centred

    def embed_query(self, text: str) -> list[float]:
        return [0.0]

    def search(self, query: object, k: int, *args: object, **kwargs: object):
        lexical = "folder" in kwargs  # only the lexical index is asked with folder=/tag=
        ranking = self.lexical_ids if lexical else self.dense_ids
        return [(cid, 1.0 - i / 100) for i, cid in enumerate(ranking)]

    def chunks(self, ids: list[str]) -> dict[str, Chunk]:
        return {i: self.known[i] for i in ids if i in self.known}

    def note(self, path: str) -> None:
        return None  # not indexed from disk: never promoted

    def unit_vectors(self, ids: object) -> dict[str, object]:
        return {}  # no vector cache: the store's cosines stand


def fake(dense: list[str], lexical: list[str] | None = None) -> FakeIndex:
    return FakeIndex(dense, lexical)


def search(index: FakeIndex, **options: Any) -> list[SearchResult]:
    options.setdefault("link_weight", 0.0)  # no link signal: the fused scores stay exact RRF
    options.setdefault("cite_spans", False)  # the order is the subject, not where each cites
    return hybrid_search(index, "q", SearchOptions(**options))  # type: ignore[arg-type]


def run(index: FakeIndex, signals: dict[str, float] | None = None, **options: Any) -> list:
    prior = (lambda ids: signals) if signals is not None else None
    return search(index, prior=prior, **options)


def ids(results: list) -> list[str]:
    return [r.chunk_id for r in results]


# -- the fused list reacts to feedback --------------------------------------------------------


def test_equal_neighbours_without_feedback_keep_the_base_order():
    index = fake(["a"], ["b"])  # a: dense rank 0, b: lexical rank 0 → equal fused scores
    results = run(index)
    assert ids(results) == ["a", "b"] and results[0].base_score == results[1].base_score
    assert all(r.prior == 1.0 and r.score == r.base_score for r in results)


def test_a_down_voted_chunk_drops_below_an_equally_scored_neighbour():
    assert ids(run(fake(["a"], ["b"]), {"a": -1 / 3})) == ["b", "a"]


def test_an_up_voted_chunk_rises_above_an_equally_scored_neighbour():
    assert ids(run(fake(["a"], ["b"]), {"b": 1 / 3})) == ["b", "a"]


def test_results_report_base_score_prior_and_final_score():
    a, b = run(fake(["a"], ["b"]), {"b": 0.5})
    assert (a.chunk_id, a.prior) == ("b", 1 + B * 0.5)
    assert a.base_score == round(1 / 11, 6) and a.score == round(1 / 11 * (1 + B * 0.5), 6)
    assert (b.prior, b.score) == (1.0, b.base_score)


def test_the_prior_cannot_overturn_a_clear_difference():
    # a is found by both retrievers (2/11), c is dense rank 2 only (1/13): ratio 0.42.
    index = fake(["a", "b", "c"], ["a"])
    worst = {"a": -1e9, "c": 1e9, "b": -1}  # clamped to ±1: full strength, no further
    results = run(index, worst)
    assert ids(results) == ["a", "c", "b"]  # c rises past b (a near-tie), never past a
    assert [r.prior for r in results] == pytest.approx([1 - B, 1 + B, 1 - B])


def test_only_near_ties_can_flip():
    # Single-retriever ranks r and r + 1 differ by the factor (11 + r) / (12 + r); with b = 0.1
    # a full-strength vote pair flips ranks whose ratio is above (1 - b) / (1 + b) = 0.818 only.
    ranking = [f"c{i:02d}" for i in range(12)]
    for target in range(1, 12):
        results = run(fake(ranking), {ranking[0]: -1, ranking[target]: 1}, k=12)
        ratio = (11 + 0) / (11 + target)
        flipped = ids(results).index(ranking[target]) < ids(results).index(ranking[0])
        assert flipped == (ratio > (1 - B) / (1 + B)), (target, ratio)


def test_switching_the_prior_off_restores_the_base_order():
    index = fake(["a", "b", "c", "d"], ["d", "c", "e"])
    base = ids(run(index))
    signals = {"a": -1, "d": 1, "e": 1}
    assert ids(run(index, signals)) != base
    assert ids(run(index, signals, prior_weight=0.0)) == base
    assert ids(run(index, None)) == base
    assert ids(run(index, {})) == base


def test_the_prior_re_orders_candidates_never_adds_one():
    index = fake(["a", "b"], ["c"])
    asked: list[list[str]] = []

    def prior(candidates):
        asked.append(list(candidates))
        return {"outsider": 1.0, "a": 0.0}

    results = search(index, prior=prior)
    assert sorted(asked[0]) == ["a", "b", "c"]  # asked about the fused candidates only
    assert "outsider" not in ids(results) and len(results) == 3


@pytest.mark.parametrize("weight", [-0.01, MAX_PRIOR_WEIGHT + 0.01, math.nan])
def test_out_of_range_weights_are_refused(weight):
    with pytest.raises(ValueError, match="prior_weight"):
        apply_prior({"a": 1.0}, lambda ids: {}, weight)


fused_lists = st.dictionaries(
    st.text("abcdefgh", min_size=1, max_size=3),
    st.floats(min_value=1e-4, max_value=1.0),
    min_size=1,
    max_size=30,
)
any_signal = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-50, 50))


@given(
    fused=fused_lists,
    signals=st.dictionaries(st.text("abcdefghxyz", min_size=1, max_size=3), any_signal),
    weight=st.floats(min_value=0.0, max_value=MAX_PRIOR_WEIGHT),
)
def test_the_bound_holds_for_any_feedback(fused, signals, weight):
    factors = apply_prior(fused, lambda ids: signals, weight)
    assert factors.keys() == fused.keys()  # re-orders: the same candidates, none added
    final = {i: fused[i] * factors[i] for i in fused}
    for i, factor in factors.items():
        assert 1 - weight - 1e-12 <= factor <= 1 + weight + 1e-12
        for j in fused:
            # Bounded: a lead larger than the prior's full swing is never overturned.
            if fused[i] * (1 - weight) > fused[j] * (1 + weight):
                assert final[i] > final[j]


# -- the signal from the history ----------------------------------------------------------


def test_one_vote_is_a_third_of_the_full_effect_and_votes_saturate():
    config = PriorConfig(half_life_days=30)
    assert signal([Vote(1, 0.0)], 0.0, config) == pytest.approx(1 / 3)
    assert signal([Vote(-1, 0.0)] * 2, 0.0, config) == pytest.approx(-2 / 3)
    assert signal([Vote(1, 0.0)] * 50, 0.0, config) == 1.0
    assert signal([Vote(1, 0.0), Vote(-1, 0.0)], 0.0, config) == 0.0


def test_decay_halves_the_effect_after_one_half_life():
    config = PriorConfig(half_life_days=30)
    now = 100 * DAY_SECONDS
    fresh = signal([Vote(-1, now)], now, config)
    one = signal([Vote(-1, now - 30 * DAY_SECONDS)], now, config)
    two = signal([Vote(-1, now - 60 * DAY_SECONDS)], now, config)
    assert one == pytest.approx(fresh / 2) and two == pytest.approx(fresh / 4)
    assert decay(-5 * DAY_SECONDS, 30) == 1.0  # a vote from the future is not worth more


def test_an_old_up_vote_weighs_less_than_a_new_down_vote():
    config = PriorConfig(half_life_days=30)
    now = 100 * DAY_SECONDS
    votes = [Vote(1, now - 60 * DAY_SECONDS), Vote(-1, now)]
    assert signal(votes, now, config) == pytest.approx((0.25 - 1) / 3)


@pytest.mark.parametrize("half_life", [0, -1, math.inf, math.nan])
def test_half_life_must_be_positive(half_life):
    with pytest.raises(ValueError):
        PriorConfig(half_life_days=half_life)


def test_feedback_reaches_the_search_factor_and_decays(tmp_path):
    """Store → prior → hybrid_search, with a clock: the factor is 1 - b/3 after one down-vote
    and 1 - b/6 one half-life later."""
    record_answer(tmp_path, answer_id="x", question="q", answer="a", citations=[{"chunk_id": "a"}])
    submit_feedback(tmp_path, "x", "down", now=0.0)
    clock = [0.0]
    prior = FeedbackPrior(FeedbackStore(tmp_path), PriorConfig(half_life_days=10), lambda: clock[0])
    index = fake(["a"], ["b"])
    try:
        results = search(index, prior=prior)
        assert ids(results) == ["b", "a"]
        assert results[1].prior == pytest.approx(1 - B / 3)
        clock[0] = 10 * DAY_SECONDS
        results = search(index, prior=prior)
        assert results[1].prior == pytest.approx(1 - B / 6)
        assert prior(["b", "unknown"]) == {}  # no votes, no signal
    finally:
        prior.close()
