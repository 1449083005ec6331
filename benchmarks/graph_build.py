"""The code graph (issue 43): how long a code tree's relations take to build, how large they
are, and how fast a question to them is.

    python -m benchmarks graph_build TREE [--repeats 3]

Every file of TREE with a code suffix (hidden folders skipped, as `code_parse`), parsed by
`sources/code/relations.py` and written to a fresh `graph.sqlite3` (`graph_store/store.py`)
in one transaction, as a first sync writes it: wall and CPU seconds (median of --repeats), per
1,000 files; the file's size and rows, per 1,000 files; then the time of `find_symbol` +
`callers` and `callees` for the 50 most-called names the tree defines (median, p95 in
ms).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.code_parse import code_files
from vault_rag.graph_store.code import find_symbol, relations
from vault_rag.graph_store.store import GraphStore
from vault_rag.sources.code.kind import decode
from vault_rag.sources.code.languages import parser_for, spec_for
from vault_rag.sources.code.relations import FileGraph, relations_of


def build(tree: Path, files: list[Path], db: Path) -> GraphStore:
    store = GraphStore(db)
    with store.transaction() as conn:
        for path in files:
            rel = path.relative_to(tree).as_posix()
            spec = spec_for(rel)
            text = decode(path.read_bytes())
            parser = parser_for(spec) if spec is not None else None
            graph = FileGraph([])
            if text is not None and spec is not None and parser is not None:
                graph = relations_of(parser, spec, text.encode("utf-8"), text.splitlines())
            store.replace_file(conn, rel, "-", spec.name if spec else "", graph)
    return store


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    files = code_files(args.tree)
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(args.repeats):
            db = Path(scratch) / f"graph-{repeat}.sqlite3"
            wall, cpu = time.perf_counter(), time.process_time()
            store = build(args.tree, files, db)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            store.close()
        size = db.stat().st_size
        store = GraphStore(db)
        counts = store.counts()
        with store.transaction() as conn:
            common = [
                row[0]
                for row in conn.execute(
                    "SELECT target_name FROM edges WHERE kind = 'calls' AND EXISTS "
                    "(SELECT 1 FROM symbols WHERE symbols.name = edges.target_name) "
                    "GROUP BY target_name ORDER BY COUNT(*) DESC LIMIT 50"
                )
            ]
        took = []
        for name in common:
            started = time.perf_counter()
            rows, _ = find_symbol(store, name, 1)
            if rows:
                relations(store, rows[0], "callers", limit=50)
                relations(store, rows[0], "callees", limit=50)
            took.append((time.perf_counter() - started) * 1000)
        store.close()
    per = 1000 / max(1, len(files))
    print(f"{args.tree}: {len(files)} files, rows {counts}")
    print(
        f"build: wall {statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s "
        f"(median of {args.repeats}); per 1,000 files: wall {statistics.median(walls) * per:.2f} s"
        f", CPU {statistics.median(cpus) * per:.2f} s"
    )
    print(f"size: {size / 1e6:.2f} MB; per 1,000 files {size * per / 1e6:.2f} MB")
    if took:
        ordered = sorted(took)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(
            f"find_symbol + callers + callees of the {len(took)} most-called defined names: "
            f"median {statistics.median(took):.1f} ms, p95 {p95:.1f} ms"
        )
    return 0
