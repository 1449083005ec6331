"""The vault's writing systems, counted per note at index time (`text_scripts`).

Each note's units of text per script are stored beside its chunks in the manifest (one row,
written in the same transaction as the chunks), so the vault's dominant script is a sum over
one small row per note, never a read of the notes' text at query time. Manifests written
before this table existed are filled in by the next index run (`backfill`), from the chunks the
manifest already holds.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable

from vault_rag.chunking.text_scripts import script_counts
from vault_rag.chunking.types import Chunk

SCHEMA = """
CREATE TABLE IF NOT EXISTS note_scripts (path TEXT PRIMARY KEY, counts TEXT NOT NULL);
"""


def note_counts(chunks: Iterable[Chunk]) -> Counter[str]:
    """Units per script over a note's chunks (their own text: what is searched)."""
    total: Counter[str] = Counter()
    for chunk in chunks:
        total.update(script_counts(chunk.text))
    return total


def record(db: sqlite3.Connection, path: str, chunks: Iterable[Chunk]) -> None:
    db.execute(
        "INSERT OR REPLACE INTO note_scripts(path, counts) VALUES (?, ?)",
        (path, json.dumps(dict(note_counts(chunks)), sort_keys=True)),
    )


def forget(db: sqlite3.Connection, path: str | None = None) -> None:
    if path is None:
        db.execute("DELETE FROM note_scripts")
    else:
        db.execute("DELETE FROM note_scripts WHERE path=?", (path,))


def totals(db: sqlite3.Connection) -> Counter[str]:
    """Units per script over every note that has a row."""
    total: Counter[str] = Counter()
    for (text,) in db.execute("SELECT counts FROM note_scripts"):
        try:
            total.update({k: int(v) for k, v in json.loads(text).items()})
        except (ValueError, AttributeError, TypeError):
            continue  # a damaged row is one note less, not a failed search
    return total


def missing(db: sqlite3.Connection) -> list[str]:
    """Notes of the manifest without a row (a manifest older than the table)."""
    rows = db.execute(
        "SELECT path FROM notes WHERE path NOT IN (SELECT path FROM note_scripts) ORDER BY path"
    )
    return [r[0] for r in rows]
