"""The benchmark's arithmetic and table (benchmarks/stats.py) on hand-made numbers; no
timing is measured or asserted here."""

from __future__ import annotations

import pytest

from benchmarks import stats


def test_median_of_odd_and_even_counts_ignores_order():
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert stats.median([7.0]) == 7.0
    with pytest.raises(ValueError):
        stats.median([])


def test_percentiles_interpolate_between_ranks():
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert stats.percentile(values, 50) == 10.5 == stats.median(values)
    assert stats.percentile(values, 95) == pytest.approx(19.05)  # 19 + 0.05 * (20 - 19)
    assert stats.percentile(values, 0) == 1.0
    assert stats.percentile(values, 100) == 20.0
    assert stats.percentile([5.0, 1.0], 95) == pytest.approx(4.8)
    assert stats.percentile([3.0], 95) == 3.0
    with pytest.raises(ValueError):
        stats.percentile([], 50)
    with pytest.raises(ValueError):
        stats.percentile([1.0], 101)


def test_ratio_is_ours_over_theirs_and_none_without_a_baseline():
    assert stats.ratio(2.0, 8.0) == 0.25
    assert stats.ratio(3.0, None) is None
    assert stats.ratio(None, 3.0) is None
    assert stats.ratio(3.0, 0.0) is None


def test_figures_carry_p50_p95_and_the_naive_ratio():
    lat = stats.latency_figure("v (model)", "search", [10.0, 30.0, 20.0, 40.0], "ms", "model")
    assert (lat.value, lat.p95, lat.n) == (25.0, pytest.approx(38.5), 4)
    lat.naive = 100.0
    assert lat.ratio == 0.25
    assert lat.to_dict()["ratio"] == 0.25 and lat.to_dict()["samples"] == [10.0, 30.0, 20.0, 40.0]
    med = stats.median_figure("v (stand-in)", "index", [9.0, 3.0, 6.0], "s", "stand-in")
    assert (med.value, med.p95, med.ratio) == (6.0, None, None)


def test_numbers_are_formatted_to_three_significant_figures():
    assert stats.fmt(None) == "–"
    assert stats.fmt(0.0, "s") == "0 s"
    assert stats.fmt(0.012345, "s") == "0.0123 s"
    assert stats.fmt(2.345, "s") == "2.35 s"
    assert stats.fmt(45.67, "ms") == "45.7 ms"
    assert stats.fmt(12345.6, "tokens/s") == "12,346 tokens/s"


def test_table_has_one_row_per_figure_with_ratio_target_and_verdict():
    search = stats.latency_figure(
        "synthetic-1k (stand-in)",
        "search warm",
        [10.0, 20.0, 30.0],
        "ms",
        "stand-in",
        target_text="p50 <= 50 ms",
        met=True,
    )
    search.naive = 40.0
    index = stats.median_figure(
        "sample (model)",
        "full index wall",
        [120.0, 100.0, 110.0],
        "s",
        "model",
        target_text="<= 3 s",
        met=False,
        note="24 notes | 100 chunks",
    )
    table = stats.render_table([search, index]).splitlines()
    assert len(table) == 4
    assert table[0].startswith("| vault (embedder) | figure | p50 / median | p95 |")
    assert table[2] == (
        "| synthetic-1k (stand-in) | search warm | 20.0 ms | 29.0 ms | 3 | 40.0 ms | 0.50× "
        "| p50 <= 50 ms | met |"
    )
    assert table[3] == (
        "| sample (model) | full index wall (24 notes \\| 100 chunks) | 110 s |  | 3 |  |  "
        "| <= 3 s | **missed** |"
    )


def _run(wall_ms: float, block_ms: float, cpu_ms: float, requests: int = 1) -> dict[str, object]:
    return {
        "notes": 10_000,
        "wall_ms": wall_ms,
        "loop_delay_max_ms": block_ms,
        "longest_tick_cpu_ms": cpu_ms,
        "request_count": requests,
    }


def test_reconcile_figures_take_medians_and_judge_each_start():
    first = [_run(12_000, 40, 20), _run(9_000, 70, 35), _run(8_000, 45, 30)]
    second = [_run(500, 30, 10), _run(450, 20, 12, requests=2), _run(480, 25, 11)]
    wall1, block1, wall2, block2 = stats.reconcile_figures(
        "10k (stand-in)", "stand-in", first, second
    )
    assert (wall1.value, wall1.unit, wall1.n, wall1.met) == (9.0, "s", 3, True)
    assert (block1.value, block1.unit, block1.met) == (45, "ms", True)
    assert "10000 notes; requests 1; first start" in wall1.note
    assert "most CPU between two ticks 35 ms" in block1.note
    assert (wall2.value, wall2.met) == (0.48, True) and "requests 1/2" in wall2.note
    assert block2.value == 25 and block2.met is True
    slow = stats.reconcile_figures("x", "-", [_run(10_001, 51, 1)], [_run(1, 1, 1)])
    assert slow[0].met is False and slow[1].met is False
