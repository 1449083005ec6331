"""How exact `symbol_relations` is on a real C/C++ tree (issue 43; docs/retrieval.md, "The code
graph"): each question of a relational set (`tests/data/qa/graph-*.jsonl`: a relation of a
symbol or a file) is answered by the graph (`graph_store/`: the tree parsed by tree-sitter,
names resolved with a confidence) and, independently, by grepping the checkout's text with
regular expressions that know nothing of tree-sitter:

- `derived` X: every `class|struct N … : [public|protected|private] [ns::]X` base list;
- `bases` X: the names in X's own base list;
- `includes` F: the `#include "…"` lines of F that name a file of the tree (as written, or
  under `include/`); `included_by` H: the files with such a line naming H;
- `callers` f: the files with `f(` that is not f's own definition or declaration (a line with
  a return type before the name) — files, since grep cannot tell which function holds a call.

Compared as sets (names for classes, files for the rest): precision, recall and exact (the two
sets equal) per question, and at the file level for callers. The graph's answer is every
relation it returns (any confidence), and again only those at confidence ≥ `--min-confidence`.
Also timed: the graph's build (parse + SQLite) and its size, per 1,000 files.

    python scripts/graph_eval.py tests/data/qa/graph-leveldb.jsonl \\
        [--mirror /path/to/leveldb.git] [--checkout DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "sidecar")]

from code_eval import check_out, project_of  # noqa: E402
from vault_rag.graph_store.code import find_symbol, relations  # noqa: E402
from vault_rag.graph_store.store import GraphStore  # noqa: E402
from vault_rag.settings import SourceSpec  # noqa: E402
from vault_rag.source_indexes.specs import path_rules  # noqa: E402
from vault_rag.sources.code.kind import CodeKind  # noqa: E402
from vault_rag.sources.code.languages import CODE_SUFFIXES, parser_for, spec_for  # noqa: E402
from vault_rag.sources.code.relations import FileGraph, relations_of  # noqa: E402

C_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")
_TYPE_BEFORE = re.compile(
    r"(?:^|[\s(,])(?:void|int|bool|char|size_t|u?int\d+_t|Status|Slice|std::string|"
    r"Iterator\s*\*|[A-Z]\w*\s*[*&]?|const\s+\w+\s*[*&]?)\s+(?:\w+::)*$"
)


def tree_files(root: Path) -> list[str]:
    rules = path_rules(SourceSpec(name="tree", path=root, kind="code"), root)
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        kept = path.is_file() and rel.lower().endswith(CODE_SUFFIXES) and rules(rel, False) is None
        if kept and not any(rules(p, True) for p in _folders(rel)):
            found.append(rel)
    return found


def _folders(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def build_graph(root: Path, files: list[str], db: Path) -> tuple[GraphStore, float]:
    """The graph of `files`, as `graph_store/sync.py` builds it (same parse, same rows)."""
    store = GraphStore(db)
    kind = CodeKind(1024)
    started = time.perf_counter()
    with store.transaction() as conn:
        for rel in files:
            spec = spec_for(rel)
            text, problem = kind.read(root / rel)
            parser = parser_for(spec) if spec is not None else None
            graph = FileGraph([])
            if problem is None and spec is not None and parser is not None:
                graph = relations_of(parser, spec, text.encode("utf-8"), text.splitlines())
            store.replace_file(conn, rel, "-", spec.name if spec else "", graph)
    return store, time.perf_counter() - started


# -- the independent answers (grep) ---------------------------------------------------------
def _texts(root: Path, files: list[str]) -> dict[str, str]:
    return {
        f: (root / f).read_text(encoding="utf-8", errors="replace")
        for f in files
        if f.endswith(C_SUFFIXES)
    }


_BASE_LIST = re.compile(
    r"\b(?:class|struct)\s+(?:[A-Z][A-Z0-9_]*_EXPORT\s+)?((?:\w+::)*\w+)\s*(?:final\s*)?"
    r":(?!:)\s*([^{;()]*)\{"
)


def grep_bases(texts: dict[str, str]) -> dict[str, set[str]]:
    """class name → the last parts of the names in its base lists."""
    found: dict[str, set[str]] = {}
    for text in texts.values():
        for match in _BASE_LIST.finditer(_no_comments(text)):
            names = set()
            for part in match.group(2).split(","):
                words = re.sub(r"<[^<>]*>", "", part).split()
                if words and words[-1] not in ("public", "private", "protected", "virtual"):
                    names.add(words[-1].rsplit("::", 1)[-1])
            found.setdefault(match.group(1).rsplit("::", 1)[-1], set()).update(names)
    return found


def grep_includes(texts: dict[str, str], files: set[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path, text in texts.items():
        for written in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.MULTILINE):
            for candidate in (written, f"include/{written}"):
                if candidate in files:
                    found.setdefault(path, set()).add(candidate)
                    break
    return found


def grep_caller_files(texts: dict[str, str], name: str) -> set[str]:
    short = name.rsplit("::", 1)[-1]
    call = re.compile(rf"(?<![\w~])({re.escape(short)})\s*\(")
    found = set()
    for path, text in texts.items():
        for line in _no_comments(text).splitlines():
            for match in call.finditer(line):
                before = line[: match.start()]
                if _TYPE_BEFORE.search(before) or before.rstrip().endswith(("#define", "&")):
                    continue  # its definition or a declaration
                found.add(path)
    return found


def _no_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


# -- the comparison -------------------------------------------------------------------------
def graph_answer(store: GraphStore, row: dict, min_confidence: float) -> set[str]:
    relation = row["relation"]
    subject = None
    if row.get("symbol"):
        rows, _ = find_symbol(store, row["symbol"], 50)
        classes = [r for r in rows if r.kind in ("class", "struct")]
        subject = (classes or rows or [None])[0]
        if subject is None:
            return set()
    found = relations(store, subject, relation, path=row.get("path"), limit=10_000)
    items = [r for r in found.items if r.path is not None and r.confidence >= min_confidence]
    if relation in ("derived", "bases"):
        return {(r.symbol or "").rsplit("::", 1)[-1] for r in items}
    return {r.path for r in items if r.path}


def grep_answer(row: dict, texts: dict[str, str], files: set[str]) -> set[str]:
    relation = row["relation"]
    if relation == "derived":
        wanted = row["symbol"].rsplit("::", 1)[-1]
        return {c for c, bases in grep_bases(texts).items() if wanted in bases}
    if relation == "bases":
        return grep_bases(texts).get(row["symbol"].rsplit("::", 1)[-1], set())
    includes = grep_includes(texts, files)
    if relation == "includes":
        return includes.get(row["path"], set())
    if relation == "included_by":
        return {f for f, targets in includes.items() if row["path"] in targets}
    if relation == "callers":
        return grep_caller_files(texts, row["symbol"])
    raise SystemExit(f"no grep for relation {relation!r}")


def score(got: set[str], truth: set[str]) -> dict[str, float]:
    hit = len(got & truth)
    return {
        "precision": hit / len(got) if got else float(not truth),
        "recall": hit / len(truth) if truth else 1.0,
        "exact": float(got == truth),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qa", type=Path, nargs="+")
    parser.add_argument("--checkout", type=Path, help="where the project is checked out")
    parser.add_argument("--mirror", type=Path, help="a local git dir of the project")
    parser.add_argument("--min-confidence", type=float, default=0.5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    url, commit = project_of(args.qa)
    name = url.rstrip("/").rsplit("/", 1)[-1]
    checkout = args.checkout or Path(tempfile.gettempdir()) / f"vault-rag-graph-{name}"
    check_out(url, commit, checkout, args.mirror)
    files = tree_files(checkout)
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "graph.sqlite3"
        store, seconds = build_graph(checkout, files, db)
        store.close()
        store = GraphStore(db)
        size = db.stat().st_size + sum(p.stat().st_size for p in Path(scratch).glob("*-wal"))
        counts = store.counts()
        texts = _texts(checkout, files)
        rows = [
            json.loads(line)
            for qa in args.qa
            for line in qa.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        results = []
        for row in rows:
            truth = grep_answer(row, texts, set(files))
            every = graph_answer(store, row, 0.0)
            sure = graph_answer(store, row, args.min_confidence)
            results.append(
                {
                    "id": row["id"],
                    "relation": row["relation"],
                    "subject": row.get("symbol") or row.get("path"),
                    "truth": sorted(truth),
                    "graph": sorted(every),
                    "missing": sorted(truth - every),
                    "extra": sorted(every - truth),
                    "all": score(every, truth),
                    "confident": score(sure, truth),
                }
            )
        store.close()
    summary = _summary(results)
    report = {
        "project": f"{url}@{commit}",
        "files": len(files),
        "build_seconds": round(seconds, 3),
        "graph_bytes": size,
        "per_1000_files": {
            "build_seconds": round(seconds * 1000 / max(1, len(files)), 2),
            "megabytes": round(size * 1000 / max(1, len(files)) / 1e6, 2),
        },
        "rows": counts,
        "min_confidence": args.min_confidence,
        "summary": summary,
        "questions": results,
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return
    print(f"{report['project']}: {len(files)} files, graph built in {seconds:.2f} s, {size} bytes")
    print(f"per 1,000 files: {report['per_1000_files']}; rows {counts}")
    header = f"{'relation':<12} {'n':>3}  {'P':>5} {'R':>5} {'exact':>5}"
    print(f"{header}   (≥{args.min_confidence}: P R exact)")
    for relation, s in summary.items():
        print(
            f"{relation:<12} {s['n']:>3}  {s['all']['precision']:.3f} {s['all']['recall']:.3f} "
            f"{s['all']['exact']:.3f}   {s['confident']['precision']:.3f} "
            f"{s['confident']['recall']:.3f} {s['confident']['exact']:.3f}"
        )
    for r in results:
        if r["missing"] or r["extra"]:
            where = f"  {r['id']} {r['relation']} {r['subject']}"
            print(f"{where}: missing {r['missing']}, extra {r['extra']}")


def _summary(results: list[dict]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for r in results:
        groups.setdefault(r["relation"], []).append(r)
    groups["all"] = results
    out = {}
    for relation, rows in groups.items():
        out[relation] = {"n": len(rows)}
        for which in ("all", "confident"):
            out[relation][which] = {
                m: round(sum(r[which][m] for r in rows) / len(rows), 3)
                for m in ("precision", "recall", "exact")
            }
    return out


if __name__ == "__main__":
    main()
