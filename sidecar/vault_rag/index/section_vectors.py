"""The vectors of each unit's sections, embedded at index time for citations.

A unit that merges several small sections (`chunking/spans.py`) has one vector for all of them,
so it cannot tell which of its sections a question is about; a citation then goes by words
alone. Each section of such a unit is embedded at index time (after the units) and stored here,
and read back by the citation step (`retrieval/cite.py`) without a model call: embedding a
note's sections at search time cost 0.7–7.9 s on a cold note (docs/retrieval.md).

Stored per unit content hash (`section_vectors`: the n × d matrix of its n sections, one row each
in span order; a unit of one section gets an empty row, so "done" is a row). Rows follow the
unit's content: the same text gives the same sections, a changed text a new hash. Units without
a row (new ones, or those of a manifest from before this table) are listed by `missing`; the
model calls are made in `index/updates/sections.py`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import numpy as np

from vault_rag.chunking.spans import chunk_spans
from vault_rag.chunking.types import Chunk

SCHEMA = """
CREATE TABLE IF NOT EXISTS section_vectors (
    content_hash TEXT PRIMARY KEY, sections INTEGER NOT NULL, vectors BLOB NOT NULL
);
"""


def section_texts(chunk: Chunk) -> list[str]:
    """What is embedded for each section of a unit of several (none for a unit of one): the
    unit's title line, the section's heading path and its text, as a unit is embedded."""
    spans = chunk_spans(chunk, {})
    if len(spans) < 2:
        return []
    embed = chunk.embed_text
    title = embed.split("\n", 1)[0] if embed.startswith("# ") else ""
    return [
        f"{title}\n## {s.heading_path}\n\n{s.text}" if s.heading_path else f"{title}\n\n{s.text}"
        for s in spans
    ]


def store(db: sqlite3.Connection, rows: Iterable[tuple[str, np.ndarray | None]]) -> None:
    """Write each unit's section matrix (None: a unit of one section, recorded as done)."""
    db.executemany(
        "INSERT OR REPLACE INTO section_vectors(content_hash, sections, vectors) VALUES (?, ?, ?)",
        [
            (h, 0, b"") if m is None else (h, len(m), np.asarray(m, dtype=np.float32).tobytes())
            for h, m in rows
        ],
    )


# Read through the manifest's batched `IN ({marks})` lists (`Manifest._rows_in`).
LOAD = (
    "SELECT content_hash, sections, vectors FROM section_vectors"
    " WHERE sections > 1 AND content_hash IN ({marks})"
)
PRESENT = "SELECT content_hash FROM section_vectors WHERE content_hash IN ({marks})"


def matrices(rows: Iterable[tuple[str, int, bytes]]) -> dict[str, np.ndarray]:
    """`LOAD`'s rows as section matrices with normalised rows, by unit content hash."""
    out: dict[str, np.ndarray] = {}
    for content_hash, sections, blob in rows:
        matrix = np.frombuffer(blob, dtype=np.float32).reshape(int(sections), -1)
        norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
        out[content_hash] = matrix / norms
    return out


# The embedded units' distinct hashes, read off the covering index `chunks_hash` (`+embedded`
# keeps SQLite from planning over the queue index and reading every unit's JSON row: at 73.5k
# units the count 104 → 31 ms, the next batch 106 → 7.5 ms; `benchmarks/writes.py --copies`).
_EMBEDDED_HASHES = "SELECT DISTINCT content_hash FROM chunks WHERE +embedded = 1"
_WITHOUT_ROW = "content_hash NOT IN (SELECT content_hash FROM section_vectors)"


def missing(db: sqlite3.Connection, limit: int) -> list[str]:
    """The chunks (as JSON, one per content hash) of embedded units whose sections have no
    row yet: manifests from before this table, or a step that stopped between the two."""
    rows = db.execute(
        "SELECT (SELECT data FROM chunks c WHERE c.content_hash = h.content_hash"
        f" AND c.embedded = 1 LIMIT 1) FROM ({_EMBEDDED_HASHES}) h WHERE h.{_WITHOUT_ROW}"
        " LIMIT ?",
        (limit,),
    )
    return [r[0] for r in rows]


def missing_count(db: sqlite3.Connection) -> int:
    row = db.execute(f"SELECT COUNT(*) FROM ({_EMBEDDED_HASHES}) WHERE {_WITHOUT_ROW}").fetchone()
    return int(row[0])


def prune(db: sqlite3.Connection) -> int:
    """Drop the rows of units no chunk has any more."""
    cur = db.execute(
        "DELETE FROM section_vectors WHERE content_hash NOT IN (SELECT content_hash FROM chunks)"
    )
    return cur.rowcount


def forget(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM section_vectors")
