"""What every re-ranker is, and how its outcome is kept.

A re-ranker scores (query, passage) pairs: `score(query, documents)` returns one relevance
score per document, in the documents' order (higher is better), or raises `RerankError`.
`rerank_ids` applies one to the top candidates of a fused ranking and never fails: on an error
or a timeout the fused order stays, and the outcome says why (`RerankOutcome`). The last outcome
and the counts are kept per re-ranker (`RerankHealth`) for `/v1/status`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class RerankError(RuntimeError):
    """The re-ranker could not score this request (unreachable, timeout, HTTP error, a reply
    that is not the expected shape)."""


class Reranker(Protocol):
    kind: str  # "http" or "llm"
    label: str  # what is shown: "bge-reranker at http://…"
    health: RerankHealth

    def score(self, query: str, documents: Sequence[str]) -> list[float]: ...


@dataclass
class RerankOutcome:
    """What the re-ranking stage did for one search."""

    kind: str
    applied: bool  # False: the fused order stayed (see `error`)
    candidates: int = 0
    error: str | None = None
    ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "applied": self.applied,
            "candidates": self.candidates,
            "error": self.error,
            "ms": round(self.ms, 1),
        }

    def note(self) -> str | None:
        """One line for an answer when the re-ranker failed; None when it worked."""
        if self.applied:
            return None
        return f"re-ranker unavailable ({self.error}); results are in the fused order"


@dataclass
class RerankHealth:
    """Counts and the last outcome of one re-ranker (thread-safe), for `/v1/status`."""

    calls: int = 0
    fallbacks: int = 0
    last: RerankOutcome | None = None
    last_error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, outcome: RerankOutcome) -> None:
        with self._lock:
            self.calls += 1
            self.last = outcome
            if not outcome.applied:
                self.fallbacks += 1
                self.last_error = outcome.error

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {
                "calls": self.calls,
                "fallbacks": self.fallbacks,
                "last": self.last.to_dict() if self.last else None,
                "last_error": self.last_error,
            }


def rerank_ids(
    reranker: Reranker,
    query: str,
    order: Sequence[str],
    texts: Mapping[str, str],
    candidates: int,
) -> tuple[list[str], dict[str, float], RerankOutcome]:
    """Re-order the top `candidates` ids of `order` by the re-ranker's scores (ties keep the
    fused order); the rest follow unchanged. Returns the new order, each re-scored id's score,
    and the outcome. On `RerankError` the order is `order` itself and nothing is scored."""
    top = [i for i in order[:candidates] if i in texts]
    started = time.perf_counter()
    try:
        scores = reranker.score(query, [texts[i] for i in top]) if top else []
        if len(scores) != len(top):
            raise RerankError(f"{len(scores)} scores for {len(top)} passages")
    except RerankError as exc:
        outcome = RerankOutcome(
            reranker.kind, False, len(top), str(exc), (time.perf_counter() - started) * 1000
        )
        reranker.health.record(outcome)
        return list(order), {}, outcome
    by_id = dict(zip(top, scores, strict=True))
    position = {chunk_id: n for n, chunk_id in enumerate(order)}
    reranked = sorted(top, key=lambda i: (-by_id[i], position[i]))
    chosen = set(top)
    new_order = reranked + [i for i in order if i not in chosen]
    outcome = RerankOutcome(
        reranker.kind, True, len(top), None, (time.perf_counter() - started) * 1000
    )
    reranker.health.record(outcome)
    return new_order, by_id, outcome
