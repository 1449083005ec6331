"""Code sources (issue 27): how fast a source tree becomes units, outside the model.

    python -m benchmarks code_parse TREE [--repeats 3]

Every file of TREE with a code suffix (hidden folders skipped), CPU time, median of --repeats,
in three rows each doing more than the one before it (the first is the baseline of the ratio
column): reading and decoding the files; that plus the tree-sitter parse and the symbol walk
(`parse_symbols`); the whole `code_units` (units cut and sized in the bundled model's own
tokens: its tokenizer runs, the model does not). Prints files/s, symbols/s and units/s.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchmarks.common import cpu_median
from vault_rag.chunking.pipeline import chunk_options
from vault_rag.embeddings.factory import make_provider
from vault_rag.sources.code.kind import code_units, decode
from vault_rag.sources.code.languages import CODE_SUFFIXES, parser_for, spec_for
from vault_rag.sources.code.symbols import parse_symbols


def code_files(tree: Path) -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(folder) / n for n in sorted(names) if n.lower().endswith(CODE_SUFFIXES)]
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    files = code_files(args.tree)
    texts = {p.relative_to(args.tree).as_posix(): decode(p.read_bytes()) or "" for p in files}
    options = chunk_options(None, make_provider("local"))
    counts = {"symbols": 0, "units": 0}

    def read() -> None:
        for path in files:
            decode(path.read_bytes())

    def parse() -> None:
        counts["symbols"] = 0
        for path in files:
            text = decode(path.read_bytes()) or ""
            rel = path.relative_to(args.tree).as_posix()
            spec = spec_for(rel)
            grammar = parser_for(spec) if spec is not None else None
            if spec is not None and grammar is not None:
                parsed = parse_symbols(grammar, spec, text.encode("utf-8"), text.splitlines())
                counts["symbols"] += len(parsed.symbols)

    def units() -> None:
        counts["units"] = 0
        for path in files:
            rel = path.relative_to(args.tree).as_posix()
            counts["units"] += len(code_units(rel, decode(path.read_bytes()) or "", options))

    lines = sum(len(t.splitlines()) for t in texts.values())
    print(f"{args.tree}: {len(files)} code files, {lines:,} lines; median of {args.repeats}")
    rows = [("read + decode", read), ("+ parse, symbols", parse), ("+ units, token sizes", units)]
    base = None
    print("| step | CPU s | files/s | symbols/s | units/s | × read |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, fn in rows:
        seconds = cpu_median(fn, args.repeats)
        base = base or seconds
        symbols = f"{counts['symbols'] / seconds:,.0f}" if label != "read + decode" else "–"
        made = f"{counts['units'] / seconds:,.0f}" if label.startswith("+ units") else "–"
        print(
            f"| {label} | {seconds:.2f} | {len(files) / seconds:,.0f} | {symbols} | {made} "
            f"| {seconds / base:.1f} |"
        )
    print(f"symbols: {counts['symbols']:,}, units: {counts['units']:,}")
    return 0
