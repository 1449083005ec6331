"""What the graph route (`retrieval/graph_route.py`, issue 43) adds to search on relational
questions: the sample vault with a C/C++ tree beside it as the code source `tree`, each
question of a relational set (`tests/data/qa/graph-*.jsonl`) searched as `POST /v1/search`
does, once without the route and once with it. The truth is `graph_eval.py`'s grep answer
(class names for `derived`/`bases`, files for the rest), knowing nothing of tree-sitter; a
result counts for a truth item when its unit is that class's (its symbol) or in that file.

Per relation: recall@k (share of the truth in the top k) and hit@k (some of it there).

    python scripts/graph_route_eval.py tests/data/qa/graph-leveldb.jsonl --data-dir DIR \\
        [--mirror /path/to/leveldb.git] [--checkout DIR] [-k 10] [--json]

The embedder is the settings' (`VAULT_RAG_EMBEDDINGS=hash` for a quick run: then BM25 alone
carries the search without the route)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "sidecar")]

from code_eval import check_out, project_of  # noqa: E402
from graph_eval import _texts, grep_answer, tree_files  # noqa: E402
from vault_rag.retrieval.collections import search_collections  # noqa: E402
from vault_rag.retrieval.hybrid import SearchResult, search_options  # noqa: E402
from vault_rag.serving.context import make_indexer, open_index  # noqa: E402
from vault_rag.settings import SourceSpec, load_settings  # noqa: E402
from vault_rag.source_indexes.collections import index_sources, open_searched  # noqa: E402
from vault_rag.source_indexes.graph_route import route_for  # noqa: E402
from vault_rag.source_indexes.specs import save_added  # noqa: E402

SOURCE = "tree"
CLASSES = ("derived", "bases")


def found_items(results: list[SearchResult], relation: str) -> set[str]:
    """What the results show of the answer: class names, or files of the tree."""
    code = [r for r in results if r.collection == SOURCE]
    if relation in CLASSES:
        return {(r.symbol or "").split("::")[-1] for r in code if r.symbol}
    return {r.note_path for r in code}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qa", type=Path)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--mirror", type=Path)
    parser.add_argument("--checkout", type=Path)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.qa.read_text().splitlines() if line.strip()]
    url, commit = project_of([args.qa])
    root = args.checkout or Path(tempfile.gettempdir()) / f"graph-route-{commit[:12]}"
    check_out(url, commit, root, args.mirror)
    files = tree_files(root)
    texts = _texts(root, files)

    vault = ROOT / "sidecar" / "vault_rag" / "sample_vault"
    save_added(args.data_dir, [SourceSpec(name=SOURCE, path=root, kind="code")])
    settings = load_settings(vault=vault, data_dir=args.data_dir)
    index = open_index(settings)
    try:
        make_indexer(settings, index).run()
        runs = index_sources(settings, index.provider)
        if any(r.error for r in runs):
            raise SystemExit(f"indexing failed: {[(r.name, r.error) for r in runs]}")
        indexes = open_searched(settings, index, None)
        plain = replace(search_options(settings, k=args.k), prior=None)
        routed = replace(plain, graph_route=route_for(settings, index.data_dir, indexes))
        results = []
        for row in rows:
            truth = grep_answer(row, texts, set(files))
            out = {"id": row["id"], "relation": row["relation"], "truth": len(truth)}
            for name, options in (("before", plain), ("after", routed)):
                got = found_items(
                    search_collections(indexes, row["question"], options), row["relation"]
                )
                hit = truth & got
                out[name] = {
                    "recall": round(len(hit) / len(truth), 3) if truth else 0.0,
                    "hit": float(bool(hit)),
                }
            results.append(out)
    finally:
        index.close()
    summary = _summary(results)
    if args.json:
        report = {"project": f"{url}@{commit}", "k": args.k, "summary": summary}
        print(json.dumps(report | {"questions": results}, indent=2))
        return
    print(f"{url}@{commit[:7]}, k={args.k}: recall@k / hit@k, before → after the route")
    for relation, s in summary.items():
        b, a = s["before"], s["after"]
        print(
            f"{relation:<12} {s['n']:>3}  recall {b['recall']:.3f} → {a['recall']:.3f}"
            f"   hit {b['hit']:.3f} → {a['hit']:.3f}"
        )


def _summary(results: list[dict]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for r in results:
        groups.setdefault(r["relation"], []).append(r)
    groups["all"] = results
    return {
        relation: {"n": len(rows)}
        | {
            side: {
                m: round(sum(r[side][m] for r in rows) / len(rows), 3) for m in ("recall", "hit")
            }
            for side in ("before", "after")
        }
        for relation, rows in groups.items()
    }


if __name__ == "__main__":
    main()
