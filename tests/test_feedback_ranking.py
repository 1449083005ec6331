"""Feedback moves real search results: the sample vault, the bundled model, Chroma and BM25.

Votes are cast the way users cast them (an answer citing the chunk is recorded, then rated),
and the next search re-orders. The index is built once per process (`sample_index_for`)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.embeddings.local import LocalE5Provider
from vault_rag.feedback.answers import record_answer
from vault_rag.feedback.prior import DAY_SECONDS, FeedbackPrior, PriorConfig
from vault_rag.feedback.store import FeedbackStore, submit_feedback
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import MANIFEST_FILE, VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult, hybrid_search

B = 0.1  # the default prior weight (feedback_max_boost)
# Results asked for: deep enough that a down-voted result stays in the list. A vote moves a
# result past every near-tie within the prior's swing, and fused scores (with the note and
# link signals) have many near-ties below a tie; at the default 10 it could drop out.
K = 40
QUESTIONS = [
    q["question"]
    for q in yaml.safe_load(
        (Path(__file__).parent / "data" / "sample_questions.yaml").read_text(encoding="utf-8")
    )
]
_SHARED: dict[str, object] = {}


def sample_index_for(vault: Path) -> VaultIndex:
    """An index of `vault` (the sample vault or a copy) with the real model. The first build
    in a process embeds; later ones start from its manifest, whose vector cache makes them
    re-use every vector (the indexer's own recovery path when the vector store is empty)."""
    data_dir = Path(tempfile.mkdtemp(prefix="vault-rag-feedback-"))
    atexit.register(shutil.rmtree, data_dir, True)
    cached = _SHARED.get("manifest")
    seed = os.environ.get("VAULT_RAG_TEST_SEED_INDEX")
    if isinstance(cached, Path):
        shutil.copy(cached, data_dir / MANIFEST_FILE)
    elif seed:  # developer shortcut: start from an index built earlier
        shutil.copytree(seed, data_dir, dirs_exist_ok=True)
    if "provider" not in _SHARED:
        _SHARED["provider"] = LocalE5Provider()
    index = VaultIndex(vault, data_dir, _SHARED["provider"])  # type: ignore[arg-type]
    Indexer(index).run()
    if cached is None:
        keep = Path(tempfile.mkdtemp(prefix="vault-rag-feedback-cache-")) / MANIFEST_FILE
        atexit.register(shutil.rmtree, keep.parent, True)
        with sqlite3.connect(keep) as target:
            index.manifest.db.backup(target)
        _SHARED["manifest"] = keep
    return index


@pytest.fixture(scope="module")
def index(sample_vault: Path) -> Iterator[VaultIndex]:
    built = sample_index_for(sample_vault)
    yield built
    built.close()


@pytest.fixture
def prior(tmp_path: Path) -> Iterator[FeedbackPrior]:
    opened = FeedbackPrior.open(tmp_path)
    yield opened
    opened.close()


def vote(data_dir: Path, chunk_id: str, rating: str, times: int = 1, now: float | None = None):
    """Record `times` answers citing `chunk_id` and rate each."""
    for _ in range(times):
        answer_id = os.urandom(8).hex()
        record_answer(
            data_dir,
            answer_id=answer_id,
            question="q",
            answer="a",
            citations=[{"kind": "vault", "note_path": "n.md", "chunk_id": chunk_id}],
        )
        submit_feedback(data_dir, answer_id, rating, now=now)


def search(index: VaultIndex, query: str, prior=None, **options) -> list[SearchResult]:
    return hybrid_search(index, query, SearchOptions(prior=prior, **{"k": K, **options}))


def ids(results: list[SearchResult]) -> list[str]:
    return [r.chunk_id for r in results]


def tied_pair(index: VaultIndex) -> tuple[str, list[SearchResult], int]:
    """A sample question whose results hold two neighbours with equal fused scores (RRF ties
    are common: the same rank in the dense list for one, in the BM25 list for the other)."""
    for query in QUESTIONS:
        results = search(index, query)
        for i in range(len(results) - 1):
            if results[i].base_score == results[i + 1].base_score:
                return query, results, i
    raise AssertionError("no sample question has two equally scored neighbours")


def test_without_feedback_the_prior_changes_nothing(index, prior):
    for query in QUESTIONS[:5]:
        base = search(index, query)
        with_prior = search(index, query, prior)
        assert [(r.chunk_id, r.score) for r in with_prior] == [(r.chunk_id, r.score) for r in base]
        assert all(r.prior == 1.0 and r.score == r.base_score for r in with_prior)


def test_a_down_voted_chunk_drops_below_its_equally_scored_neighbour(index, prior, tmp_path):
    query, results, i = tied_pair(index)
    upper, lower = results[i].chunk_id, results[i + 1].chunk_id
    vote(tmp_path, upper, "down")
    after = ids(search(index, query, prior))
    assert after.index(lower) < after.index(upper)
    # Nothing else moved relative to each other: only the tie flipped.
    assert [c for c in after if c != upper] == [c for c in ids(results) if c != upper]


def test_an_up_voted_chunk_rises_above_its_equally_scored_neighbour(index, prior, tmp_path):
    query, results, i = tied_pair(index)
    upper, lower = results[i].chunk_id, results[i + 1].chunk_id
    vote(tmp_path, lower, "up")
    after = search(index, query, prior)
    assert ids(after).index(lower) < ids(after).index(upper)
    moved = next(r for r in after if r.chunk_id == lower)
    assert moved.prior == pytest.approx(1 + B / 3) and moved.base_score == results[i].base_score


def test_heavy_votes_cannot_overturn_a_clearly_better_result(index, prior, tmp_path):
    query = QUESTIONS[0]
    # Without the per-note cap binding: with section-sized units a note has
    # several results, and the cap alone would let a near-tie of the same note push the
    # down-voted best result out of the list (the bound below is about order, not the cap).
    wide = {"k": 10, "per_note_cap": 10}
    base = search(index, query, **wide)
    best = base[0]
    floor = best.base_score * (1 - B) / (1 + B)
    weaker = [r for r in base if r.base_score < floor]
    assert weaker, "the sample question needs clearly weaker results"
    vote(tmp_path, best.chunk_id, "down", times=10)
    for r in weaker:
        vote(tmp_path, r.chunk_id, "up", times=10)
    after = search(index, query, prior, **wide)
    position = {r.chunk_id: n for n, r in enumerate(after)}
    # Near-ties may pass the down-voted best result, the clearly weaker ones never do.
    assert all(position[best.chunk_id] < position[r.chunk_id] for r in weaker)
    assert after[position[best.chunk_id]].prior == pytest.approx(1 - B)
    assert all(after[position[r.chunk_id]].prior == pytest.approx(1 + B) for r in weaker)
    # The bound, pair by pair: a lead larger than the prior's full swing always survives.
    for a in after:
        for b in after:
            if a.base_score * (1 - B) > b.base_score * (1 + B):
                assert position[a.chunk_id] < position[b.chunk_id]


def test_switching_the_prior_off_restores_the_base_order(index, prior, tmp_path):
    query, results, i = tied_pair(index)
    vote(tmp_path, results[i].chunk_id, "down", times=3)
    vote(tmp_path, results[-1].chunk_id, "up", times=3)
    assert ids(search(index, query, prior)) != ids(results)
    assert ids(search(index, query)) == ids(results)  # prior=None: the setting is off
    assert ids(search(index, query, prior, prior_weight=0.0)) == ids(results)


def test_the_effect_halves_after_one_half_life(index, tmp_path):
    query, results, i = tied_pair(index)
    upper = results[i].chunk_id
    vote(tmp_path, upper, "down", now=0.0)
    clock = [0.0]
    prior = FeedbackPrior(FeedbackStore(tmp_path), PriorConfig(half_life_days=30), lambda: clock[0])
    try:
        first = next(r for r in search(index, query, prior) if r.chunk_id == upper)
        clock[0] = 30 * DAY_SECONDS
        later = next(r for r in search(index, query, prior) if r.chunk_id == upper)
    finally:
        prior.close()
    assert 1 - first.prior == pytest.approx(B / 3)
    assert 1 - later.prior == pytest.approx((1 - first.prior) / 2)


def test_an_up_voted_chunk_that_is_not_a_candidate_never_appears(index, prior, tmp_path):
    query = "How do I load a TSoftObjectPtr asynchronously?"
    asked: list[str] = []

    def spy(candidates):
        asked.extend(candidates)
        return prior(candidates)

    # Candidates depend on the list's depth (k × 5 per retriever): measure them with the
    # same options as the search below, or a deeper second search would legitimately see
    # chunks the first one never considered.
    wide = {"k": 20, "per_note_cap": 20}
    search(index, query, spy, **wide)
    outsiders = sorted(index.manifest.chunk_ids() - set(asked))
    assert outsiders, "every chunk is a candidate for this query; pick a narrower one"
    for chunk_id in outsiders[:5]:
        vote(tmp_path, chunk_id, "up", times=10)
    after = search(index, query, prior, **wide)
    assert not set(ids(after)) & set(outsiders)


# -- the CLI: `vault-rag feedback`, `vault-rag search --explain` -------------------------------

runner = CliRunner()


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VAULT_RAG_CONFIG", raising=False)
    for name in ("FEEDBACK_PRIOR", "FEEDBACK_MAX_BOOST", "FEEDBACK_HALF_LIFE_DAYS"):
        monkeypatch.delenv(f"VAULT_RAG_{name}", raising=False)


def test_cli_feedback_then_search_explain(index, sample_vault, cli_env, monkeypatch):
    query, results, i = tied_pair(index)
    upper, lower = results[i].chunk_id, results[i + 1].chunk_id
    data_dir = index.data_dir  # the CLI keeps answers and feedback beside the index
    record_answer(
        data_dir,
        answer_id="cli-answer",
        question=query,
        answer="a",
        citations=[{"kind": "vault", "note_path": results[i].note_path, "chunk_id": upper}],
    )
    where = ["--vault", str(sample_vault), "--data-dir", str(data_dir)]
    try:
        done = runner.invoke(app, ["feedback", "cli-answer", "down", "--comment", "off", *where])
        assert done.exit_code == 0, done.output
        assert "recorded" in done.output

        deep = ["-k", str(K)]
        found = runner.invoke(app, ["search", query, "--explain", "--json", *deep, *where])
        assert found.exit_code == 0, found.output
        rows = json.loads(found.stdout)["results"]
        order = [r["chunk_id"] for r in rows]
        assert order.index(lower) < order.index(upper)
        row = rows[order.index(upper)]
        assert row["prior"] == pytest.approx(1 - B / 3) and row["base_score"] > row["score"]

        table = runner.invoke(
            app, ["search", query, "--explain", *deep, *where], env={"COLUMNS": "200"}
        )
        assert table.exit_code == 0, table.output
        assert "base" in table.output and "prior" in table.output and "×0.967" in table.output

        monkeypatch.setenv("VAULT_RAG_FEEDBACK_PRIOR", "false")
        off = runner.invoke(app, ["search", query, "--json", *deep, *where])
        assert [r["chunk_id"] for r in json.loads(off.stdout)["results"]] == ids(results)
    finally:
        (data_dir / "feedback.sqlite3").unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            (data_dir / f"feedback.sqlite3{suffix}").unlink(missing_ok=True)


def test_cli_feedback_errors_are_clear(index, sample_vault, cli_env, tmp_path):
    where = ["--vault", str(sample_vault), "--data-dir", str(tmp_path)]
    unknown = runner.invoke(app, ["feedback", "nope", "up", *where])
    assert unknown.exit_code == 1 and "no answer with id 'nope'" in unknown.output
    record_answer(tmp_path, answer_id="a", question="q", answer="a", citations=[])
    bad_mark = runner.invoke(app, ["feedback", "a", "down", "--wrong", "c9", *where])
    assert bad_mark.exit_code == 1 and "not cited" in bad_mark.output
    bad_rating = runner.invoke(app, ["feedback", "a", "sideways", *where])
    assert bad_rating.exit_code == 2
