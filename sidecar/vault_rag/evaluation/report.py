"""An eval report (the dict `evaluate` returns) as Markdown tables, for docs/retrieval.md."""

from __future__ import annotations

from typing import Any

from vault_rag.evaluation.metrics import MEASURES

LABELS = {
    "recall@1": "R@1",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "mrr@10": "MRR@10",
    "ndcg@10": "nDCG@10",
}
KIND_MEASURES = ("recall@1", "recall@5", "mrr@10")  # per-kind cells: R@1 / R@5 / MRR@10


def to_markdown(report: dict[str, Any], title: str = "") -> str:
    """Per level: one table of every measure per system, then one row per kind with
    R@1 / R@5 / MRR@10 per system."""
    systems: dict[str, Any] = report["systems"]
    names = list(systems)
    lines = [f"### {title}", ""] if title else []
    lines.append(
        f"{report['scored']} scored questions ({report['off_topic']} off-topic skipped), "
        f"{report['with_heading']} with `gold_heading`; depth {report['k']}."
    )
    levels = (
        ("note", "Note level"),
        ("heading", "Heading level"),
        ("page", "Page level"),
        ("symbol", "Symbol level (code)"),
    )
    for level, heading in levels:
        first = systems[names[0]].get(level, {})
        if not first.get("overall", {}).get("n"):
            continue
        lines += ["", f"{heading}, overall (n = {first['overall']['n']}):", ""]
        lines.append("| system | " + " | ".join(LABELS[m] for m in MEASURES) + " |")
        lines.append("|---|" + "---:|" * len(MEASURES))
        for name in names:
            row = systems[name][level]["overall"]
            lines.append(f"| {name} | " + " | ".join(_num(row[m]) for m in MEASURES) + " |")
        lines += ["", f"{heading}, per kind (R@1 / R@5 / MRR@10):", ""]
        lines.append("| kind | n | " + " | ".join(names) + " |")
        lines.append("|---|---:|" + "---|" * len(names))
        for kind, stats in first["by_kind"].items():
            cells = [
                " / ".join(_num(systems[n][level]["by_kind"][kind][m]) for m in KIND_MEASURES)
                for n in names
            ]
            lines.append(f"| {kind} | {stats['n']} | " + " | ".join(cells) + " |")
    if any(systems[n].get("all") for n in names):
        n_all = next(systems[n]["all"]["n"] for n in names if systems[n].get("all"))
        lines += ["", f"Every gold item found (`gold_all`, n = {n_all}):", ""]
        lines += ["| system | all@5 | all@10 |", "|---|---:|---:|"]
        for name in names:
            row = systems[name].get("all") or {}
            cells = [_num(row[m]) if m in row else "–" for m in ("all@5", "all@10")]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _num(value: float) -> str:
    return f"{value:.3f}".removeprefix("0") if value < 1 else f"{value:.2f}"
