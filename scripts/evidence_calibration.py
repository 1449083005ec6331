"""The data behind the evidence bars of `graph/calibration.py`: how strongly each question of a
QA file (and a list of extra off-topic questions) matches its vault, and what the guards decide.

For every question it runs the very search `classify_intent` runs (`graph.evidence`) and prints
the best cosine, the best BM25 score raw and scaled (÷ ln passages), whether a close passage is
in the question's script, and the strength: `weak` is what gets "your notes do not cover
this", `strong` what overrules a model's chitchat/off-topic verdict. The summary per vault:
answerable questions declined (should be none), off-topic ones declined, strong off-topic ones
(should be none), and the ranges. No model is used; the index must exist (`vault-rag index`).

    python scripts/evidence_calibration.py \\
        --set sample tests/data/qa/sample.jsonl sidecar/vault_rag/sample_vault DATA_DIR \\
        --set ue-notes tests/data/qa/ue-notes.jsonl ../shared/vaults/ue-notes-zh DATA_DIR \\
        --extra tests/data/off_topic_extra.jsonl [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from vault_rag.graph.config import Resources
from vault_rag.graph.evaluate import load_qa
from vault_rag.graph.evidence import question_evidence
from vault_rag.serving.context import open_index
from vault_rag.settings import load_settings


def measure(qa: Path, vault: Path, data_dir: Path, extra: Path | None) -> list[dict[str, Any]]:
    settings = load_settings(vault=vault, data_dir=data_dir)
    index = open_index(settings)
    try:
        resources = Resources.from_settings(settings, index=index)
        items = [(item, "qa") for item in load_qa(qa)]
        items += [(item, "extra") for item in (load_qa(extra) if extra else [])]
        rows = []
        for item, source in items:
            evidence = asyncio.run(question_evidence(item.question, resources.defaults, resources))
            rows.append(
                {
                    "id": item.id,
                    "source": source,
                    "off_topic": item.off_topic,
                    "dense": round(evidence.dense, 3),
                    "bm25": round(evidence.lexical, 2),
                    "bm25_scaled": evidence.lexical_scaled,
                    "same_script": evidence.same_script,
                    "strength": evidence.strength,
                }
            )
        return rows
    finally:
        index.close()


def summary(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if not r["off_topic"]]
    qa_off = [r for r in rows if r["off_topic"] and r["source"] == "qa"]
    extra_off = [r for r in rows if r["off_topic"] and r["source"] == "extra"]
    scripted = [r for r in answerable if r["same_script"]]

    def span(values: list[float]) -> str:
        return f"{min(values):.3f}–{max(values):.3f}" if values else "—"

    return {
        "set": name,
        "answerable declined": [r["id"] for r in answerable if r["strength"] == "weak"],
        "off-topic declined (QA)": f"{sum(r['strength'] == 'weak' for r in qa_off)}/{len(qa_off)}",
        "off-topic declined (extra)": (
            f"{sum(r['strength'] == 'weak' for r in extra_off)}/{len(extra_off)}"
        ),
        "off-topic strong": [r["id"] for r in qa_off + extra_off if r["strength"] == "strong"],
        "answerable strong": f"{sum(r['strength'] == 'strong' for r in answerable)}/"
        f"{len(answerable)}",
        "cosine answerable": span([r["dense"] for r in answerable]),
        "cosine off-topic": span([r["dense"] for r in qa_off + extra_off]),
        "scaled BM25 answerable (same script)": span([r["bm25_scaled"] for r in scripted]),
        "scaled BM25 off-topic": span([r["bm25_scaled"] for r in qa_off + extra_off]),
        "other script": sum(not r["same_script"] for r in rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set",
        nargs=4,
        action="append",
        required=True,
        metavar=("NAME", "QA", "VAULT", "DATA_DIR"),
    )
    parser.add_argument("--extra", type=Path, help="more off-topic questions (QA format)")
    parser.add_argument("--json", action="store_true", help="every question, as JSON lines")
    args = parser.parse_args()
    for name, qa, vault, data_dir in args.set:
        rows = measure(Path(qa), Path(vault), Path(data_dir), args.extra)
        if args.json:
            for row in rows:
                sys.stdout.write(json.dumps({"set": name, **row}, ensure_ascii=False) + "\n")
        else:
            for key, value in summary(name, rows).items():
                sys.stdout.write(f"{key:38} {value}\n")
            sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
