"""How strongly the vault covers a question, measured by retrieval alone (no model).

The model's verdicts are checked against this: a `chitchat` or `off_topic` verdict is overruled
when the vault has strong evidence; a question whose evidence is weak is told "your notes do not
cover this" (with the closest notes) instead of being answered from unrelated passages; the
grader cannot drop hits that are strong evidence. Strong and weak both need the dense (cosine,
calibrated per embedding model) and the lexical (BM25) side to agree.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from vault_rag.graph.calibration import LEXICAL, calibration_for
from vault_rag.graph.config import Configuration, Resources
from vault_rag.graph.sources import note_link_target
from vault_rag.retrieval.focus import NoteFocus
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult, hybrid_search
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
class Evidence:
    dense: float  # best cosine among the hits (0 when the dense side found nothing)
    lexical: float  # best BM25 score among the hits
    strength: Strength
    hits: list[SearchResult]

    def closest_notes(self, limit: int = 3) -> list[str]:
        notes = dict.fromkeys(note_link_target(h.note_path) for h in self.hits)
        return list(notes)[:limit]


def thresholds(configuration: Configuration, resources: Resources) -> tuple[float, float]:
    """(weak, strong) cosine bars for the index's embedding model; settings override weak."""
    calibration = calibration_for(resources.index.provider.model_id)
    weak = configuration.weak_evidence_threshold
    return (calibration.weak_evidence if weak is None else weak), calibration.strong_evidence


def strength_of(dense: float | None, lexical: float | None, weak: float, strong: float) -> Strength:
    dense, lexical = dense or 0.0, lexical or 0.0
    if dense >= strong and lexical >= LEXICAL.strong:
        return "strong"
    if dense < weak and lexical < LEXICAL.weak:
        return "weak"
    if lexical == 0.0 and dense < strong:
        # Not one term in common with any note. Small retrieval units lift the best cosine of
        # an unrelated question (红烧肉 → a "Cooking" unit at .86 on the sample vault), while
        # every answerable sample question shares terms (best BM25 ≥ 2.6).
        return "weak"
    return "some"


async def question_evidence(
    question: str,
    configuration: Configuration,
    resources: Resources,
    focus: NoteFocus | None = None,
) -> Evidence:
    """Search the vault for the question as asked and rate the best hits."""
    options = search_options(configuration, resources, focus)
    hits = await asyncio.to_thread(hybrid_search, resources.index, question, options)
    dense = max((h.dense_score or 0.0 for h in hits), default=0.0)
    lexical = max((h.lexical_score or 0.0 for h in hits), default=0.0)
    weak, strong = thresholds(configuration, resources)
    return Evidence(dense, lexical, strength_of(dense, lexical, weak, strong), hits)
