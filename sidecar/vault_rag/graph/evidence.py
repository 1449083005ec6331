"""How strongly the vault covers a question, measured by retrieval alone (no model).

The model's verdicts are checked against this: a `chitchat` or `off_topic` verdict is overruled
when the vault has strong evidence; a question whose evidence is weak is told "your notes do not
cover this" (with the closest notes) instead of being answered from unrelated passages; the
grader cannot drop hits that are strong evidence. Strong needs the dense (cosine, calibrated
per embedding model) and the lexical (BM25) side to agree; weak is little in common by BM25 and
no close cosine either. BM25 grows with the vault (its IDF is the log of the number of
passages), so it is compared on a scale divided by ln(passages): the same bars hold on a
220-passage and a 3500-passage vault (docs/answers.md, "Calibration").
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, Literal

from vault_rag.graph.config import Configuration, Resources
from vault_rag.graph.sources import note_link_target
from vault_rag.retrieval.calibration import LEXICAL, calibration_for
from vault_rag.retrieval.collections import search_collections
from vault_rag.retrieval.focus import NoteFocus
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult
from vault_rag.retrieval.hybrid import search_options as build_search_options

Strength = Literal["strong", "some", "weak"]


def search_options(
    configuration: Configuration, resources: Resources, focus: NoteFocus | None = None
) -> SearchOptions:
    """The vault search every node runs: the run's k, cap and fusion, plus the feedback prior
    (and the turn's note `focus`, when it is asked about one), built by the one builder every
    search path uses (`retrieval.hybrid.search_options`)."""
    return build_search_options(
        resources.settings,
        prior=resources.prior,
        k=configuration.top_k,
        per_note_cap=configuration.per_note_cap,
        rrf_k=configuration.rrf_k,
        focus=focus,
    )


@dataclass(frozen=True)
class Bars:
    """The evidence bars for one index: cosine bars of its embedding model, and the scale that
    makes its BM25 scores comparable across vaults (`calibration.LexicalCalibration`)."""

    weak: float  # cosine below which the vault's evidence is weak (web search, decline)
    strong: float  # cosine at or above which a hit may be strong evidence
    unmatched_weak: float  # cosine bar for a question in a script no close passage uses
    lexical_scale: float  # ln(passages in the lexical index): BM25 / this is comparable
    # False for an index of fewer than LEXICAL.min_passages passages: there IDF is near zero
    # for every term (a one-note vault scores its own title 0.35), so BM25 cannot tell.
    lexical_informative: bool = True

    def lexical(self, bm25: float | None) -> float:
        return (bm25 or 0.0) / self.lexical_scale


@dataclass(frozen=True)
class Evidence:
    dense: float  # best cosine among the hits (0 when the dense side found nothing)
    lexical: float  # best BM25 score among the hits
    strength: Strength
    hits: list[SearchResult]
    lexical_scaled: float = 0.0  # `lexical` on the vault-independent scale
    same_script: bool = True  # some close passage is written in the question's script

    def closest_notes(self, limit: int = 3) -> list[str]:
        """The closest files, each as the answer names it: a vault note as a `[[link]]`; a file
        of a source beside the vault as `` `source › path` `` (a wikilink would make Obsidian
        open, or create, a note of that name in this vault)."""
        notes = dict.fromkeys(_named(h) for h in self.hits)
        return list(notes)[:limit]


def _named(hit: SearchResult) -> str:
    if hit.collection == "vault":
        return f"[[{note_link_target(hit.note_path)}]]"
    return f"`{hit.collection} › {hit.note_path}`"


def bars_for(configuration: Configuration, resources: Resources) -> Bars:
    """The bars of the index's embedding model and size; settings override the weak cosine."""
    calibration = calibration_for(resources.index.provider.model_id)
    weak = configuration.weak_evidence_threshold
    # (the passages of every collection searched: the hits come from all of them)
    searched = searched_indexes(resources, configuration.collections).values()
    passages = sum(index.lexical.count() for index in searched)
    return Bars(
        weak=calibration.weak_evidence if weak is None else weak,
        strong=calibration.strong_evidence,
        unmatched_weak=calibration.unmatched_weak,
        lexical_scale=math.log(max(passages, LEXICAL.min_passages)),
        lexical_informative=passages >= LEXICAL.min_passages,
    )


def strength_of(
    dense: float | None, lexical: float | None, bars: Bars, *, same_script: bool = True
) -> Strength:
    """Strong: the dense and the lexical side both clearly match. Weak: little in common by
    BM25 (on the vault-independent scale) and no close cosine either. A question that cannot
    share words with the notes (`same_script` false: a Chinese question over English notes) is
    judged by the cosine alone, and is never strong; so is any question over an index too small
    for BM25 to mean anything (`Bars.lexical_informative`)."""
    dense, scaled = dense or 0.0, bars.lexical(lexical)
    if not same_script or not bars.lexical_informative:
        return "weak" if dense < bars.unmatched_weak else "some"
    if dense >= bars.strong and scaled >= LEXICAL.strong:
        return "strong"
    if dense < bars.strong and scaled < LEXICAL.weak:
        return "weak"
    return "some"


# A question is CJK when at least this share of its letters are; a passage is written (partly)
# in a script when at least this share of its letters are in it.
CJK_QUESTION = 0.3
SCRIPT_IN_PASSAGE = 0.1


def _cjk_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    cjk = sum("\u2e80" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" for c in letters)
    return cjk / len(letters) if letters else 0.0


def same_script(question: str, hits: list[SearchResult]) -> bool:
    """Whether some hit is written (at least partly) in the question's script, CJK or not.
    Otherwise the two share no word, and BM25 says nothing about whether the notes cover it."""
    if not hits:
        return True
    if _cjk_share(question) >= CJK_QUESTION:
        return any(_cjk_share(h.text) >= SCRIPT_IN_PASSAGE for h in hits)
    return any(_cjk_share(h.text) <= 1 - SCRIPT_IN_PASSAGE for h in hits)


def searched_indexes(resources: Resources, wanted: list[str] | None) -> dict[str, Any]:
    """The indexes vault search covers: the vault's, with the sources' (`source_indexes/service.py`)
    when the run has them (`Configuration.collections` chooses among them)."""
    if resources.sources is None:
        return {"vault": resources.index}
    indexes: dict[str, Any] = resources.sources.indexes(wanted)
    return indexes


async def question_evidence(
    question: str,
    configuration: Configuration,
    resources: Resources,
    focus: NoteFocus | None = None,
) -> Evidence:
    """Search the vault for the question as asked and rate the best hits."""
    options = search_options(configuration, resources, focus)
    indexes = searched_indexes(resources, configuration.collections)
    hits = await asyncio.to_thread(search_collections, indexes, question, options)
    dense = max((h.dense_score or 0.0 for h in hits), default=0.0)
    lexical = max((h.lexical_score or 0.0 for h in hits), default=0.0)
    bars = await asyncio.to_thread(bars_for, configuration, resources)
    script = same_script(question, hits)
    strength = strength_of(dense, lexical, bars, same_script=script)
    return Evidence(dense, lexical, strength, hits, round(bars.lexical(lexical), 3), script)
