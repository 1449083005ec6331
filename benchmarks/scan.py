"""Benchmark what a server pays per write and per start-up scan to know the vault's files.

    python -m benchmarks scan VAULT [--repeats 5]

Rows (CPU time, median of --repeats, ratio to the baseline named in each section): the full
os.walk listing the vault walk used to be against `VaultListing` (first listing, and again with
nothing changed: what each posted note and watcher batch pays), and the start-up scan's
per-note check against the manifest (`read_note_file` with its path checks, and with
`walked=True` for paths the listing found).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchmarks.common import cpu_median
from vault_rag.index.manifest import NoteRecord
from vault_rag.index.note_file import read_note_file
from vault_rag.vault.listing import VaultListing
from vault_rag.vault.paths import to_rel_path
from vault_rag.vault.reader import DEFAULT_IGNORES, is_ignored


def os_walk_listing(vault_root: Path) -> list[str]:
    """The vault walk before `VaultListing` (os.walk + pathlib), for the baseline."""
    root = vault_root.resolve()
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".")
            and not is_ignored(to_rel_path(root, Path(dirpath) / d) + "/x", DEFAULT_IGNORES)
        )
        for name in filenames:
            absolute = Path(dirpath) / name
            if name.lower().endswith(".md") and not absolute.is_symlink():
                rel = to_rel_path(root, absolute)
                if not is_ignored(rel, DEFAULT_IGNORES):
                    found.append(rel)
    return sorted(found)


def row(name: str, seconds: float, base: float) -> None:
    print(f"| {name} | {seconds * 1000:,.1f} ms | {seconds / base:.3g}× |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    root = args.vault.resolve()
    paths = os_walk_listing(root)
    assert VaultListing(root).paths() == paths, "the listing differs from a full walk"
    print(f"{len(paths):,} notes, CPU time, median of {args.repeats}\n")
    print("| listing the vault's notes (baseline: os.walk) | CPU | ratio |\n|---|---:|---:|")
    base = cpu_median(lambda: os_walk_listing(root), args.repeats)
    row("os.walk + pathlib (before)", base, base)
    row(
        "VaultListing, first listing",
        cpu_median(lambda: VaultListing(root).paths(), args.repeats),
        base,
    )
    kept = VaultListing(root)
    kept.paths()
    row("VaultListing again, nothing changed", cpu_median(kept.paths, args.repeats), base)

    known = {}
    for rel in paths:
        st = (root / rel).stat()
        known[rel] = NoteRecord(rel, "-", st.st_mtime_ns, st.st_size)
    print("\n| start-up scan: each note against its record (baseline: path checks) | CPU | ratio |")
    print("|---|---:|---:|")
    base = cpu_median(lambda: [read_note_file(root, r, known[r]) for r in paths], args.repeats)
    row("read_note_file (resolve_inside per note, before)", base, base)
    walked = cpu_median(
        lambda: [read_note_file(root, r, known[r], walked=True) for r in paths], args.repeats
    )
    row("read_note_file(walked=True)", walked, base)
    return 0
