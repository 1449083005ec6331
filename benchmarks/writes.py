"""Benchmark the manifest work per written note and per search, on a copy of an index.

    python -m benchmarks writes DATA_DIR [--notes 30]

CPU time, median over --notes notes; each row next to the statement or path it replaced
(run here as the baseline, so both sides see the same database in the same run):
* a note's embedded units, as `replace_note` and `embedded_chunks` ask: the query SQLite
  planned over the (embedded, priority) index — a scan of every embedded unit — before
  `+embedded` made it look the note up by path;
* the note centroids after one note is written: compared over every note (before) or only
  the notes the write named (`Manifest.notes_touched`);
* the next batch of the embedding queue: sorted from every waiting unit (before) or read off
  an index in the queue's order (only measurable while units wait: a first index);
* the search's chunk lookup of 100 candidates: one query per id (before) or per 500;
* what the writer asks after each job and when idle: the units whose sections have no vectors
  yet (count and next batch) and the prune of vectors no unit uses, planned over the queue
  index reading every unit's JSON row (before) or off `chunks_hash`.

`--copies K` first adds K copies of every unit (new ids and hashes, with their vectors and
section rows), so a small vault's index stands in for a large one's at these queries.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vault_rag.index.dense.note_vectors import NoteVectors
from vault_rag.index.manifest import Manifest, chunk_from_json


def cpu(fn: Callable[[], object]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def row(name: str, samples: list[float], base: float | None = None) -> float:
    value = statistics.median(samples)
    ratio = "" if base is None else f"{value / base:.3g}×"
    print(f"| {name} | {value * 1000:,.2f} ms | {ratio} |")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a data dir (copied, never written)")
    parser.add_argument("--notes", type=int, default=30)
    parser.add_argument("--copies", type=int, default=0, help="add K copies of every unit")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-writes-"))
    try:
        for suffix in ("", "-wal", "-shm"):
            source = args.data / f"manifest.sqlite3{suffix}"
            if source.exists():
                shutil.copy(source, work / source.name)
        manifest = Manifest(work / "manifest.sqlite3")
        if args.copies:
            _copy_units(manifest.db, args.copies)
        counts = manifest.counts()
        paths = sorted(manifest.notes())[: args.notes]
        print(f"{counts['notes']:,} notes, {counts['chunks']:,} units; CPU, median of {len(paths)}")
        print("\n| per written note | CPU | ratio |\n|---|---:|---:|")
        db = manifest.db
        old_sql = "SELECT id, content_hash FROM chunks WHERE note_path=? AND embedded=1"
        base = row(
            "embedded units of a note, planned over (embedded, priority) (before)",
            [cpu(lambda p=p: db.execute(old_sql, (p,)).fetchall()) for p in paths],
        )
        new_sql = old_sql.replace("AND embedded", "AND +embedded")
        row(
            "… looked up by note path (`+embedded`)",
            [cpu(lambda p=p: db.execute(new_sql, (p,)).fetchall()) for p in paths],
            base,
        )
        row(
            "replace_note with the same units",
            [
                cpu(
                    lambda p=p: manifest.replace_note(
                        manifest.note(p),  # type: ignore[arg-type]
                        manifest.note_chunks(p),
                        sorted(manifest.note_deps(p)),
                        [],
                    )
                )
                for p in paths
            ],
        )
        vectors = NoteVectors(manifest)
        query = [0.05] * int(manifest.get_meta("dimension") or 384)
        vectors.rank(query, 50)
        full: list[float] = []
        touched: list[float] = []
        for p in paths:
            manifest.replace_note(
                manifest.note(p),  # type: ignore[arg-type]
                manifest.note_chunks(p),
                sorted(manifest.note_deps(p)),
                [],
            )
            touched.append(cpu(lambda: vectors.rank(query, 50)))
            vectors._token = None  # as if another process had written: compare every note
            full.append(cpu(lambda: vectors.rank(query, 50)))
        print("\n| after one written note, the next search's centroids | CPU | ratio |")
        print("|---|---:|---:|")
        base = row("compared over every note (before)", full)
        row("only the notes the write named", touched, base)

        ids = [r[0] for r in db.execute("SELECT id FROM chunks ORDER BY id LIMIT 100")]

        def one_by_one() -> None:
            for i in ids:
                found = db.execute("SELECT data FROM chunks WHERE id=?", (i,)).fetchone()
                if found:
                    chunk_from_json(found[0])

        print("\n| the embedding queue: the next 32 waiting units | CPU | ratio |\n|---|---:|---:|")
        waiting = manifest.counts()["pending"]
        db.execute("DROP INDEX chunks_queue")
        db.execute("CREATE INDEX old_pending ON chunks(embedded, priority)")
        base = row(
            f"over (embedded, priority): every waiting unit sorted (before; {waiting:,} waiting)",
            [cpu(lambda: manifest.pending(32)) for _ in range(5)],
        )
        db.execute("DROP INDEX old_pending")
        db.execute(
            "CREATE INDEX chunks_queue ON chunks(embedded, priority DESC, note_path, ordinal)"
        )
        row("read off chunks_queue", [cpu(lambda: manifest.pending(32)) for _ in range(5)], base)

        print("\n| a search's 100 candidates from the manifest | CPU | ratio |\n|---|---:|---:|")
        base = row("one query per id (before)", [cpu(one_by_one) for _ in range(20)])
        row(
            "Manifest.chunks (one query)",
            [cpu(lambda: manifest.chunks(ids)) for _ in range(20)],
            base,
        )
        _hash_queries(manifest)
        manifest.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _copy_units(db: sqlite3.Connection, copies: int) -> None:
    """K more copies of every unit, each with its own id, hash, vector and section row."""
    for k in range(1, copies + 1):
        tag = f"~{k}"
        db.execute(
            "INSERT INTO chunks(id, note_path, ordinal, content_hash, embedded, priority, data)"
            " SELECT id || ?1, note_path || ?1, ordinal, content_hash || ?1, embedded, priority,"
            " data FROM chunks WHERE id NOT LIKE '%~%'",
            (tag,),
        )
        db.execute(
            "INSERT INTO vectors SELECT content_hash || ?1, vector FROM vectors"
            " WHERE content_hash NOT LIKE '%~%'",
            (tag,),
        )
        db.execute(
            "INSERT INTO section_vectors SELECT content_hash || ?1, sections, vectors"
            " FROM section_vectors WHERE content_hash NOT LIKE '%~%'",
            (tag,),
        )
    db.commit()


# What the writer asked before `chunks_hash` (the baseline rows below).
_OLD_MISSING = (
    "SELECT MIN(data) FROM chunks WHERE embedded = 1 AND content_hash NOT IN"
    " (SELECT content_hash FROM section_vectors) GROUP BY content_hash LIMIT 32"
)
_OLD_PRUNE = [
    "DELETE FROM vectors WHERE content_hash NOT IN (SELECT content_hash FROM chunks)",
    "DELETE FROM section_vectors WHERE content_hash NOT IN (SELECT content_hash FROM chunks)",
]
_OLD_COUNT = (
    "SELECT COUNT(DISTINCT content_hash) FROM chunks WHERE embedded = 1 AND content_hash"
    " NOT IN (SELECT content_hash FROM section_vectors)"
)


def _hash_queries(manifest: Manifest) -> None:
    db = manifest.db
    # a few units without section rows, as after an interrupted step
    db.execute("DELETE FROM section_vectors WHERE rowid % 500 = 0")
    db.commit()

    # (every vector is in use: each prune scans and deletes nothing)
    def old_prune() -> None:
        for sql in _OLD_PRUNE:
            db.execute(sql)

    print("\n| the writer's look-ups by content hash | CPU | ratio |\n|---|---:|---:|")
    db.execute("DROP INDEX chunks_hash")
    before = [
        row(
            "sections missing: count (before)",
            [cpu(lambda: db.execute(_OLD_COUNT).fetchall()) for _ in range(5)],
        ),
        row(
            "sections missing: next 32 (before)",
            [cpu(lambda: db.execute(_OLD_MISSING).fetchall()) for _ in range(5)],
        ),
        row("prune of unused vectors (before)", [cpu(old_prune) for _ in range(5)]),
    ]
    db.execute("CREATE INDEX chunks_hash ON chunks(content_hash, embedded)")
    row(
        "sections missing: count, off chunks_hash",
        [cpu(manifest.sections_missing_count) for _ in range(5)],
        before[0],
    )
    row(
        "sections missing: next 32, off chunks_hash",
        [cpu(lambda: manifest.sections_missing(32)) for _ in range(5)],
        before[1],
    )
    row(
        "prune of unused vectors, off chunks_hash",
        [cpu(manifest.prune_vectors) for _ in range(5)],
        before[2],
    )
