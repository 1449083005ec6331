"""A code source's relations in SQLite: `graph.sqlite3` beside its manifest
(`<data dir>/sources/<name>/`). One row per symbol (with its enclosing name, so CONTAINS is a
lookup) and per distinct edge (`sources/code/relations.py`), keyed by file, so a changed file
replaces its rows and a deleted one removes them.

Versioned: `meta.version` is `GRAPH_VERSION` with the code kind's `CODE_UNITS_VERSION`; a
store written by another version is emptied when opened and filled again by the next sync
(`sync.py`), never mixed."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from vault_rag.sources.code.kind import CODE_UNITS_VERSION
from vault_rag.sources.code.relations import INCLUDES, FileGraph

GRAPH_FILE = "graph.sqlite3"
GRAPH_VERSION = "1"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    file_hash TEXT NOT NULL,     -- the manifest's file hash when it was parsed
    language TEXT NOT NULL,
    errors INTEGER NOT NULL,     -- ERROR/MISSING nodes: a file cut halfway keeps what parsed
    truncated INTEGER NOT NULL   -- 1: more distinct edges than relations.MAX_EDGES
);
CREATE TABLE IF NOT EXISTS symbols (
    path TEXT NOT NULL,
    qualified TEXT NOT NULL,     -- `ns::A::f`, `K::f`
    name TEXT NOT NULL,          -- its last part: `f`
    parent TEXT NOT NULL,        -- the enclosing name: `ns::A` ('' at the top of the file)
    parent_name TEXT NOT NULL,   -- its last part: `A`
    kind TEXT NOT NULL,          -- function | class | struct | …
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols(path);
CREATE INDEX IF NOT EXISTS symbols_parent ON symbols(parent_name);
CREATE TABLE IF NOT EXISTS edges (
    path TEXT NOT NULL,          -- the file holding the edge
    kind TEXT NOT NULL,          -- calls | inherits | includes | imports
    source TEXT NOT NULL,        -- the holding symbol ('' = the file)
    source_line INTEGER NOT NULL,
    target TEXT NOT NULL,        -- as written: `ns::k`, `Base`, `a/b.h`, `pkg.mod`
    target_name TEXT NOT NULL,   -- its last part: `k`, `Base`, `b.h`, `mod`
    hint TEXT NOT NULL,
    line INTEGER NOT NULL,
    count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_target ON edges(kind, target_name);
CREATE INDEX IF NOT EXISTS edges_source ON edges(path, source);
CREATE INDEX IF NOT EXISTS edges_holder ON edges(kind, source);
"""


def version() -> str:
    return f"{GRAPH_VERSION}/{CODE_UNITS_VERSION}"


@dataclass(frozen=True)
class SymbolRow:
    path: str
    qualified: str
    name: str
    parent: str
    kind: str
    line_start: int
    line_end: int


@dataclass(frozen=True)
class EdgeRow:
    path: str
    kind: str
    source: str
    source_line: int
    target: str
    target_name: str
    hint: str
    line: int
    count: int


def last_part(name: str, kind: str = "") -> str:
    """The part of a written name that a definition is looked up by."""
    if kind == INCLUDES or (kind == "imports" and "/" in name):
        return name.rstrip("/").rsplit("/", 1)[-1]
    if kind == "imports":
        return name.strip(".").rsplit(".", 1)[-1] if name.strip(".") else ""
    for separator in ("::", "."):
        name = name.rsplit(separator, 1)[-1]
    return name.strip()


class GraphStore:
    """One code source's graph. Safe to share between threads (one connection, a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(SCHEMA)
        self.rebuilt = False  # emptied on open: written by another version
        if self.get_meta("version") != version():
            with self.transaction() as conn:
                for table in ("files", "symbols", "edges", "meta"):
                    conn.execute(f"DELETE FROM {table}")
                conn.execute("INSERT INTO meta VALUES ('version', ?)", (version(),))
            self.rebuilt = True

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._conn:
            yield self._conn

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def files(self) -> dict[str, str]:
        with self._lock:
            return dict(self._conn.execute("SELECT path, file_hash FROM files"))

    def file_info(self, path: str) -> tuple[str, int, bool] | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT language, errors, truncated FROM files WHERE path = ?", (path,)
            ).fetchone()
        return (row[0], int(row[1]), bool(row[2])) if row else None

    def replace_file(
        self, conn: sqlite3.Connection, path: str, file_hash: str, language: str, graph: FileGraph
    ) -> None:
        """Inside `transaction()`: the file's rows replaced by `graph`'s."""
        self._remove(conn, path)
        conn.execute(
            "INSERT INTO files VALUES (?, ?, ?, ?, ?)",
            (path, file_hash, language, graph.errors, int(graph.truncated)),
        )
        conn.executemany(
            "INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    path,
                    s.name,
                    s.path[-1] if s.path else "?",
                    "::".join(s.path[:-1]),
                    s.path[-2] if len(s.path) > 1 else "",
                    s.kind,
                    s.start,
                    s.end,
                )
                for s in graph.symbols
            ],
        )
        conn.executemany(
            "INSERT INTO edges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    path,
                    e.kind,
                    e.source,
                    e.source_line,
                    e.target,
                    last_part(e.target, e.kind),
                    e.hint,
                    e.line,
                    e.count,
                )
                for e in graph.edges
            ],
        )

    def remove_file(self, conn: sqlite3.Connection, path: str) -> None:
        self._remove(conn, path)

    def _remove(self, conn: sqlite3.Connection, path: str) -> None:
        for table in ("files", "symbols", "edges"):
            conn.execute(f"DELETE FROM {table} WHERE path = ?", (path,))

    # -- reads ------------------------------------------------------------------------------
    def symbols_named(self, name: str, *, nocase: bool = False) -> list[SymbolRow]:
        sql = "SELECT path, qualified, name, parent, kind, line_start, line_end FROM symbols "
        sql += "WHERE name = ? COLLATE NOCASE" if nocase else "WHERE name = ?"
        return self._symbols(sql, (name,))

    def symbols_in(self, path: str) -> list[SymbolRow]:
        sql = "SELECT path, qualified, name, parent, kind, line_start, line_end FROM symbols "
        return self._symbols(sql + "WHERE path = ? ORDER BY line_start", (path,))

    def children_of(self, name: str) -> list[SymbolRow]:
        sql = "SELECT path, qualified, name, parent, kind, line_start, line_end FROM symbols "
        return self._symbols(sql + "WHERE parent_name = ? ORDER BY path, line_start", (name,))

    def _symbols(self, sql: str, args: tuple) -> list[SymbolRow]:
        with self._lock:
            return [SymbolRow(*row) for row in self._conn.execute(sql, args)]

    def edges_to(self, kinds: Iterable[str], name: str, limit: int) -> list[EdgeRow]:
        kinds = list(kinds)
        marks = ",".join("?" * len(kinds))
        sql = (
            "SELECT path, kind, source, source_line, target, target_name, hint, line, count "
            f"FROM edges WHERE kind IN ({marks}) AND target_name = ? LIMIT ?"
        )
        return self._edges(sql, (*kinds, name, limit))

    def edges_from(
        self, kinds: Iterable[str], path: str, source: str | None, limit: int
    ) -> list[EdgeRow]:
        kinds = list(kinds)
        marks = ",".join("?" * len(kinds))
        sql = (
            "SELECT path, kind, source, source_line, target, target_name, hint, line, count "
            f"FROM edges WHERE path = ? AND kind IN ({marks})"
        )
        args: tuple = (path, *kinds)
        if source is not None:
            sql += " AND source = ?"
            args += (source,)
        return self._edges(sql + " ORDER BY line LIMIT ?", (*args, limit))

    def bases_written(self, qualified: str) -> list[str]:
        """The base names written by every definition of the class `qualified`."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT target FROM edges WHERE kind = 'inherits' AND source = ?",
                (qualified,),
            ).fetchall()
        return [r[0] for r in rows]

    def _edges(self, sql: str, args: tuple) -> list[EdgeRow]:
        with self._lock:
            return [EdgeRow(*row) for row in self._conn.execute(sql, args)]

    def paths_ending(self, tail: str) -> list[str]:
        """Indexed files whose path is `tail` or ends with `/tail`."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT path FROM files WHERE path = ? OR path LIKE ? ESCAPE '\\'",
                (tail, "%/" + tail.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")),
            ).fetchall()
        return sorted(r[0] for r in rows)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {
                table: int(self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                for table in ("files", "symbols", "edges")
            }
