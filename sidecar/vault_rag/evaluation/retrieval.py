"""Run a question set through one or more retrieval systems and score them.

A system is anything that turns a question into ranked `Hit`s. "ours" is the index searched
exactly as `POST /v1/search` searches it (`hybrid_search` with the options built from the
settings); the naive baseline lives in `naive.py`. Every system sees the same questions, and
each is asked for `k × per_note_cap` passages so that k distinct notes can fill the note-level
list whatever a system's per-note cap.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from vault_rag.evaluation.metrics import (
    Hit,
    all_found,
    first_rank,
    heading_run,
    mean,
    note_run,
    page_run,
    score,
    symbol_run,
)
from vault_rag.evaluation.qa import QAItem, source_key
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.collections import search_collections
from vault_rag.retrieval.hybrid import Retriever, SearchOptions, hybrid_search
from vault_rag.retrieval.hybrid import search_options as product_search_options
from vault_rag.settings import Settings

SIDES: dict[str, tuple[Retriever, ...]] = {
    "fused": ("dense", "lexical"),
    "dense": ("dense",),
    "lexical": ("lexical",),
}


def search_options(settings: Settings, k: int, rerank: bool = False) -> SearchOptions:
    """The options `POST /v1/search` uses for these settings (built by the one builder,
    `retrieval.hybrid.search_options`), asking for `k` passages; no feedback prior, and the
    re-ranker only when `rerank` (`vault-rag eval --rerank`), so runs stay comparable."""
    options = product_search_options(settings, k=k)
    return options if rerank else replace(options, reranker=None)


class System(Protocol):
    name: str

    def search(self, question: str) -> list[Hit]: ...


@dataclass
class IndexSystem:
    """The product's search over its own index: `hybrid_search` with `options` (the feedback
    prior is off, so votes cannot skew a measurement); `side` picks dense, BM25 or both.
    With `collections` (the vault's index and sources beside it, `source_indexes/collections.py`),
    the search across them that `POST /v1/search` runs (`search_collections`); a source's
    results are named `source:path` (`qa.source_key`)."""

    index: VaultIndex
    options: SearchOptions
    side: str = "fused"
    name: str = ""
    collections: Mapping[str, VaultIndex] | None = None

    def __post_init__(self) -> None:
        self.options = replace(self.options, retrievers=SIDES[self.side], prior=None)
        self.name = self.name or ("ours" if self.side == "fused" else f"ours-{self.side}")

    def search(self, question: str) -> list[Hit]:
        if self.collections:  # (one collection: its own list, unchanged)
            results = search_collections(self.collections, question, self.options)
        else:
            results = hybrid_search(self.index, question, self.options)
        return [
            Hit(
                r.note_path if r.collection == "vault" else source_key(r.collection, r.note_path),
                r.heading_path,
                tuple(r.embedded_in),
                r.chunk_id,
                r.page,
                r.page_end,
                r.symbol or "",
            )
            for r in results
        ]


@dataclass
class Outcome:
    """One question under one system."""

    item: QAItem
    note_rank: int | None
    heading_rank: int | None  # None also when the question has no gold_heading
    first: Hit | None
    page_rank: int | None = None  # None also when the question has no gold_page
    symbol_rank: int | None = None  # None also when the question has no gold_symbol
    all_at: dict[int, bool] = field(default_factory=dict)  # gold_all: every item in top n


@dataclass
class SystemReport:
    name: str
    note: dict[str, Any] = field(default_factory=dict)  # {"overall": {...}, "by_kind": {...}}
    heading: dict[str, Any] = field(default_factory=dict)
    page: dict[str, Any] = field(default_factory=dict)  # questions with a gold_page only
    symbol: dict[str, Any] = field(default_factory=dict)  # questions with a gold_symbol only
    all: dict[str, Any] = field(default_factory=dict)  # gold_all questions: all@5, all@10
    misses: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def evaluate(
    items: Sequence[QAItem],
    systems: Sequence[System],
    k: int = 10,
    on_question: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Score every system on `items`; off-topic questions are skipped and counted."""
    answerable = [i for i in items if not i.off_topic]
    reports = []
    for system in systems:
        started = time.perf_counter()
        judged = []
        for item in answerable:
            judged.append(_judge(item, system.search(item.question), k))
            if on_question is not None:
                on_question()
        report = _report(system.name, judged)
        report.seconds = round(time.perf_counter() - started, 2)
        reports.append(report)
    return {
        "k": k,
        "questions": len(items),
        "scored": len(answerable),
        "off_topic": len(items) - len(answerable),
        "with_heading": sum(1 for i in answerable if i.gold_heading),
        "with_page": sum(1 for i in answerable if i.gold_page),
        **(
            {"with_symbol": sum(1 for i in answerable if i.gold_symbols)}
            if any(i.gold_symbols for i in answerable)
            else {}
        ),
        "systems": {r.name: _as_dict(r) for r in reports},
    }


ALL_DEPTHS = (5, 10)  # gold_all questions: every gold item within the first n notes/files


@dataclass
class Judged:
    outcome: Outcome
    notes: list[str]
    headings: list[str] | None
    pages: list[str] | None
    symbols: list[str] | None


def _judge(item: QAItem, hits: list[Hit], k: int) -> Judged:
    notes = note_run(hits, item.gold, k)
    headings = heading_run(hits, item.gold, item.gold_heading, k) if item.gold_heading else None
    pages = page_run(hits, item.gold, item.gold_page, k) if item.gold_page else None
    symbols = symbol_run(hits, item.gold, item.gold_symbols, k) if item.gold_symbols else None
    outcome = Outcome(
        item=item,
        note_rank=first_rank(notes),
        heading_rank=first_rank(headings) if headings is not None else None,
        first=hits[0] if hits else None,
        page_rank=first_rank(pages) if pages is not None else None,
        symbol_rank=first_rank(symbols) if symbols is not None else None,
        all_at={n: all_found(hits, item.gold, n) for n in ALL_DEPTHS} if item.gold_all else {},
    )
    return Judged(outcome, notes, headings, pages, symbols)


def _report(name: str, judged: list[Judged]) -> SystemReport:
    note_scores, heading_scores, page_scores, symbol_scores = (
        _scores(judged, level) for level in ("notes", "headings", "pages", "symbols")
    )
    report = SystemReport(name)
    report.note = _grouped([j.outcome for j in judged], note_scores)
    report.heading = _grouped([j.outcome for j in judged if j.headings is not None], heading_scores)
    paged = [j.outcome for j in judged if j.pages is not None]
    if paged:  # (absent from reports of question sets without pages: their JSON is unchanged)
        report.page = _grouped(paged, page_scores)
    coded = [j.outcome for j in judged if j.symbols is not None]
    if coded:  # (likewise: only sets with gold_symbol)
        report.symbol = _grouped(coded, symbol_scores)
    needing_all = [j.outcome for j in judged if j.outcome.all_at]
    if needing_all:
        report.all = {
            "n": len(needing_all),
            **{f"all@{n}": mean_of([o.all_at[n] for o in needing_all]) for n in ALL_DEPTHS},
        }
    for outcome in (j.outcome for j in judged):
        if outcome.note_rank == 1:
            continue
        first = outcome.first
        report.misses.append(
            {
                "id": outcome.item.id,
                "kind": outcome.item.kind,
                "question": outcome.item.question,
                "gold": list(outcome.item.gold),
                "gold_rank": outcome.note_rank,  # None: not among the top k notes
                "first": None
                if first is None
                else {"note_path": first.note_path, "heading_path": first.heading_path},
            }
        )
    return report


def _scores(judged: list[Judged], level: str) -> dict[str, dict[str, float]]:
    """Every measure per question id, for the questions judged at `level` (a `Judged` field)."""
    runs = {j.outcome.item.id: getattr(j, level) for j in judged}
    return score({qid: run for qid, run in runs.items() if run is not None})


def _grouped(outcomes: list[Outcome], scores: dict[str, dict[str, float]]) -> dict[str, Any]:
    by_kind: dict[str, list[dict[str, float]]] = defaultdict(list)
    for outcome in outcomes:
        by_kind[outcome.item.kind].append(scores[outcome.item.id])
    return {
        "overall": {"n": len(outcomes), **mean(scores[o.item.id] for o in outcomes)},
        "by_kind": {kind: {"n": len(rows), **mean(rows)} for kind, rows in sorted(by_kind.items())},
    }


def _as_dict(report: SystemReport) -> dict[str, Any]:
    return {
        "note": report.note,
        "heading": report.heading,
        **({"page": report.page} if report.page else {}),
        **({"symbol": report.symbol} if report.symbol else {}),
        **({"all": report.all} if report.all else {}),
        "misses": report.misses,
        "seconds": report.seconds,
    }


def mean_of(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0
