"""The feedback prior: how much each chunk's rating history should move it in the ranking.

For a chunk with current votes v_i ∈ {+1, −1} cast t_i days ago:

    net    = Σ v_i · 0.5 ** (t_i / half_life)        (each vote halves every half-life)
    signal = clamp(net / saturation, −1, 1)

so one vote has a third of the full effect (saturation 3), the effect grows linearly with more
agreeing votes until it saturates, and an unsaturated effect halves exactly after one
half-life. `hybrid_search` turns the signal into a bounded multiplicative factor on the fused
score (see `retrieval.hybrid.apply_prior`); this module never decides by how much a score may
move, so the bound holds whatever the history holds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vault_rag.feedback.store import FeedbackStore, Vote
from vault_rag.settings import Settings

DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class PriorConfig:
    half_life_days: float = 90.0
    saturation: float = 3.0  # decayed net votes at which the signal is full (±1)

    def __post_init__(self) -> None:
        if not self.half_life_days > 0 or not math.isfinite(self.half_life_days):
            raise ValueError("feedback_half_life_days must be a positive number")
        if not self.saturation > 0:
            raise ValueError("saturation must be positive")


def decay(age_seconds: float, half_life_days: float) -> float:
    """Weight of a vote `age_seconds` old: 1 when new, 1/2 after one half-life. A vote from
    the future (clock changes) counts as new, never more."""
    return 0.5 ** (max(age_seconds, 0.0) / (half_life_days * DAY_SECONDS))


def signal(votes: Iterable[Vote], now: float, config: PriorConfig) -> float:
    """The chunk's feedback signal in [−1, 1] (see the module doc)."""
    net = sum(v.vote * decay(now - v.created_at, config.half_life_days) for v in votes)
    return max(-1.0, min(1.0, net / config.saturation))


class FeedbackPrior:
    """A `SearchOptions.prior`: chunk ids → feedback signal, for the chunks that have votes.

    It reads the store on every call, so a vote counts from the very next search. Thread-safe
    (the store serialises its connection), so one instance can serve a whole server.
    """

    def __init__(
        self,
        store: FeedbackStore,
        config: PriorConfig | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.config = config or PriorConfig()
        self.clock = clock

    @classmethod
    def open(cls, data_dir: Path, config: PriorConfig | None = None) -> FeedbackPrior:
        return cls(FeedbackStore(data_dir), config)

    def close(self) -> None:
        self.store.close()

    def __call__(self, chunk_ids: Sequence[str]) -> dict[str, float]:
        now = self.clock()
        found = self.store.votes(chunk_ids)
        signals = {cid: signal(votes, now, self.config) for cid, votes in found.items()}
        return {cid: s for cid, s in signals.items() if s != 0.0}


def open_prior(settings: Settings) -> FeedbackPrior | None:
    """The configured prior for `SearchOptions.prior` (None when switched off). Pass it to
    `retrieval.hybrid.search_options`, which pairs it with `feedback_max_boost`; close it with
    the index."""
    if not settings.feedback_prior:
        return None
    config = PriorConfig(half_life_days=settings.feedback_half_life_days)
    return FeedbackPrior.open(settings.resolved_data_dir(), config)
