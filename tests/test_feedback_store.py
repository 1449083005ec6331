"""The answer store and the feedback store: what is kept, and what a rating means per chunk."""

from __future__ import annotations

import threading

import pytest

from vault_rag.feedback.answers import AnswerStore, UnknownAnswerError, record_answer
from vault_rag.feedback.store import FeedbackStore, parse_rating, submit_feedback

CITATIONS = [
    {"kind": "vault", "note_path": "A.md", "heading": "A > X", "anchor": "X", "chunk_id": "c1"},
    {"kind": "vault", "note_path": "B.md", "heading": "", "anchor": "", "chunk_id": "c2"},
    {"kind": "vault", "note_path": "B.md", "heading": "", "anchor": "", "chunk_id": "c2"},
    {"kind": "web", "url": "https://example.com/x", "title": "X", "doc_id": "w1"},
]


@pytest.fixture
def data_dir(tmp_path):
    record_answer(
        tmp_path,
        answer_id="a1",
        question="What is X?",
        answer="X is [[A#X]].",
        citations=CITATIONS,
        model="qwen3",
        thread_id="t1",
        created_at=1000.0,
    )
    return tmp_path


def current_votes(data_dir, ids=("c1", "c2")):
    with FeedbackStore(data_dir) as store:
        return {cid: [v.vote for v in votes] for cid, votes in store.votes(ids).items()}


def test_answer_round_trip(data_dir):
    with AnswerStore(data_dir) as store:
        answer = store.require("a1")
        assert store.get("nope") is None
        with pytest.raises(UnknownAnswerError, match="nope"):
            store.require("nope")
    assert (answer.question, answer.model, answer.thread_id) == ("What is X?", "qwen3", "t1")
    assert answer.citations == CITATIONS and answer.created_at == 1000.0
    assert answer.chunk_ids == ["c1", "c2"]  # web citations have none; repeats once
    assert answer.citation_keys() == {"c1", "c2", "https://example.com/x"}


def test_recording_again_updates_but_keeps_the_first_time(data_dir):
    again = record_answer(
        data_dir, answer_id="a1", question="What is X?", answer="new", citations=[], model=None
    )
    assert again.answer == "new" and again.citations == [] and again.created_at == 1000.0


def test_answer_needs_an_id(tmp_path):
    with pytest.raises(ValueError):
        record_answer(tmp_path, answer_id="", question="q", answer="a", citations=[])


def test_feedback_is_stored_with_question_chunks_and_time(data_dir):
    fb = submit_feedback(data_dir, "a1", "up", comment="good", now=5000.0)
    assert (fb.rating, fb.question, fb.chunk_ids, fb.created_at) == (
        1,
        "What is X?",
        ["c1", "c2"],
        5000.0,
    )
    with FeedbackStore(data_dir) as store:  # persisted: a new connection sees it
        (stored,) = store.history("a1")
        assert stored == fb and stored.comment == "good"
        assert store.latest_rating("a1") == 1 and store.latest_rating("other") is None


def test_up_and_down_vote_every_cited_chunk(data_dir):
    submit_feedback(data_dir, "a1", "up")
    assert current_votes(data_dir) == {"c1": [1], "c2": [1]}
    submit_feedback(data_dir, "a1", -1)
    assert current_votes(data_dir) == {"c1": [-1], "c2": [-1]}


def test_the_latest_feedback_of_an_answer_replaces_its_votes(data_dir):
    for _ in range(3):  # clicking 👍 again must not stack votes
        submit_feedback(data_dir, "a1", "up")
    assert current_votes(data_dir) == {"c1": [1], "c2": [1]}
    with FeedbackStore(data_dir) as store:
        assert len(store.history("a1")) == 3  # the history keeps every click


def test_votes_of_different_answers_add_up(data_dir):
    record_answer(data_dir, answer_id="a2", question="q", answer="a", citations=CITATIONS[:1])
    submit_feedback(data_dir, "a1", "up")
    submit_feedback(data_dir, "a2", "down")
    assert sorted(current_votes(data_dir)["c1"]) == [-1, 1]


def test_wrong_marks_on_an_up_vote_sink_only_the_marked_source(data_dir):
    fb = submit_feedback(data_dir, "a1", "up", wrong=["c2", "https://example.com/x"])
    assert fb.wrong == ["c2", "https://example.com/x"]
    assert current_votes(data_dir) == {"c1": [1], "c2": [-1]}


def test_wrong_marks_on_a_down_vote_spare_the_other_sources(data_dir):
    submit_feedback(data_dir, "a1", "down", wrong=["c2"])
    assert current_votes(data_dir) == {"c2": [-1]}


def test_marks_must_name_a_cited_source(data_dir):
    with pytest.raises(ValueError, match="not cited"):
        submit_feedback(data_dir, "a1", "down", wrong=["c9"])
    assert current_votes(data_dir) == {}


def test_feedback_on_an_unknown_answer_is_refused(data_dir):
    with pytest.raises(UnknownAnswerError):
        submit_feedback(data_dir, "missing", "up")


@pytest.mark.parametrize(
    ("value", "expected"), [("up", 1), ("DOWN", -1), (1, 1), (-1, -1), ("+1", 1), ("-1", -1)]
)
def test_parse_rating(value, expected):
    assert parse_rating(value) == expected


@pytest.mark.parametrize("value", [0, 2, True, "meh", ""])
def test_parse_rating_refuses_anything_else(value):
    with pytest.raises(ValueError):
        parse_rating(value)


def test_one_store_serves_many_threads(data_dir):
    with AnswerStore(data_dir) as answers, FeedbackStore(data_dir) as store:
        answer = answers.require("a1")
        errors: list[BaseException] = []

        def work() -> None:
            try:
                for _ in range(20):
                    store.add(answer, "up")
                    store.votes(["c1", "c2"])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert len(store.history("a1")) == 80
        assert {cid: len(v) for cid, v in store.votes(["c1", "c2"]).items()} == {"c1": 1, "c2": 1}
