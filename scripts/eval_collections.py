"""How fair the merge across collections is (docs/retrieval.md, "Sources beside the vault").

For a question set over the vault, with one code source beside it: note-level R@5 / R@10 /
MRR@10 of the vault's gold when the vault is searched alone, when every collection is searched
and merged rank by rank (the product's merge before routing, issue 43; `vault-rag eval` measures
the routed merge), and when merged by raw score (the naive merge it replaced); and the share of
the top 10 the code source takes. Uses the indexes `vault-rag index` built (settings as for
any command).

    python scripts/eval_collections.py tests/data/qa/sample.jsonl --vault V --data-dir D
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vault_rag.retrieval.hybrid import SearchResult, hybrid_search, search_options
from vault_rag.retrieval.routing import merge_weighted
from vault_rag.serving.context import open_index
from vault_rag.settings import load_settings
from vault_rag.source_indexes.collections import open_searched


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    return {
        "R@5": round(sum(1 for r in ranks if r is not None and r <= 5) / n, 3),
        "R@10": round(sum(1 for r in ranks if r is not None and r <= 10) / n, 3),
        "MRR@10": round(sum(1 / r for r in ranks if r is not None and r <= 10) / n, 3),
    }


def _rank(results: list[SearchResult], gold: set[str]) -> int | None:
    notes: list[str] = []
    for r in results:
        if r.collection == "vault" and r.note_path not in notes:
            notes.append(r.note_path)
        elif r.collection != "vault":
            notes.append(f"{r.collection}:{r.note_path}:{r.chunk_id}")
    return next((i for i, p in enumerate(notes, 1) if p in gold), None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("qa", type=Path)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args()
    settings = load_settings(vault=args.vault, data_dir=args.data_dir)
    vault_index = open_index(settings)
    indexes = open_searched(settings, vault_index, None)
    options = search_options(settings, k=10)
    items = [json.loads(line) for line in args.qa.read_text(encoding="utf-8").splitlines()]
    alone, by_rank, by_score, code_share = [], [], [], []
    for item in items:
        gold = set(item["gold"])
        lists = {
            name: hybrid_search(index, item["question"], options) for name, index in indexes.items()
        }
        alone.append(_rank(lists["vault"], gold))
        merged = merge_weighted(lists, {}, 10)  # equal weights: rank by rank
        by_rank.append(_rank(merged, gold))
        tagged = [r for name, rs in lists.items() for r in merge_weighted({name: rs}, {}, 10)]
        by_score.append(_rank(sorted(tagged, key=lambda r: -r.score)[:10], gold))
        code_share.append(sum(r.collection != "vault" for r in merged) / max(1, len(merged)))
    sizes = {name: index.lexical.count() for name, index in indexes.items()}
    print(json.dumps({"questions": len(items), "passages": sizes}, ensure_ascii=False))
    print("| search | R@5 | R@10 | MRR@10 |")
    print("|---|---|---|---|")
    for label, ranks in (
        ("vault alone", alone),
        ("every collection, merged by rank (before routing)", by_rank),
        ("every collection, merged by raw score", by_score),
    ):
        m = _metrics(ranks)
        print(f"| {label} | {m['R@5']} | {m['R@10']} | {m['MRR@10']} |")
    print(f"code share of the merged top 10: {sum(code_share) / len(code_share):.2f}")


if __name__ == "__main__":
    main()
