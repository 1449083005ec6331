"""The manifest: SQLite record of what the index holds, per note and per chunk.

It is the source of truth for "what chunks exist". The vector store and the lexical index are
projections of it that may lag behind after a crash; `Indexer.reconcile` brings them back in
line. Vectors are cached here by content hash, so an unchanged chunk (after an edit elsewhere in
the note, a rename, or a store rebuild) is never embedded twice.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vault_rag.chunking.types import Chunk
from vault_rag.index import note_scripts, section_vectors

SCHEMA_VERSION = "1"
# Transactions remembered with the notes they touched (`notes_touched`); older ones are
# forgotten, and a cache that far behind rebuilds.
# Warning codes of files the vault listing leaves out (vault/listing.py); `ignored` (a source's
# own rules: .gitignore, build folders) is counted apart from the warnings: nothing is wrong.
SKIP_CODES = ("unsafe_name", "not_regular", "ignored")
IGNORED_CODE = "ignored"
JOURNAL_SIZE = 4096
# `vector_arrays` for more hashes than this reads the whole vectors table in one pass.
_WHOLE_TABLE = 2000
# The file hash of a note recorded from a post while the disk held an older version
# (`index/updates/sync.py`): the next disk event or scan re-reads the file.
POSTED_PREFIX = "posted:"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    path TEXT PRIMARY KEY,
    file_hash TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    indexed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    note_path TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0,   -- 1 once the vector store holds it
    priority INTEGER NOT NULL DEFAULT 0,   -- higher is embedded first (recently changed notes)
    data TEXT NOT NULL                     -- the chunk as JSON
);
CREATE INDEX IF NOT EXISTS chunks_note ON chunks(note_path);
-- The embedding queue in `pending`'s order, so the next batch is read off the index: over
-- (embedded, priority) SQLite sorted every waiting unit per batch (~0.5 s at 35k waiting).
DROP INDEX IF EXISTS chunks_pending;
CREATE INDEX IF NOT EXISTS chunks_queue ON chunks(embedded, priority DESC, note_path, ordinal);
-- Units by content hash: the vector caches' prune and the sections backfill ask which hashes
-- are still used (without it, a scan of every JSON row: at 73.5k units the prune 602 → 88 ms
-- CPU, `benchmarks/writes.py --copies 20`).
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(content_hash, embedded);
CREATE TABLE IF NOT EXISTS deps (
    note_path TEXT NOT NULL,
    target TEXT NOT NULL,   -- a note path, or "missing:<lower-cased link text>"
    PRIMARY KEY (note_path, target)
);
CREATE INDEX IF NOT EXISTS deps_target ON deps(target);
CREATE TABLE IF NOT EXISTS warnings (
    note_path TEXT NOT NULL, code TEXT NOT NULL, message TEXT NOT NULL,
    target TEXT, line INTEGER
);
CREATE INDEX IF NOT EXISTS warnings_note ON warnings(note_path);
CREATE TABLE IF NOT EXISTS vectors (content_hash TEXT PRIMARY KEY, vector BLOB NOT NULL);
-- Notes posted by the plugin (`PUT /v1/notes`): sha256 of the posted content, valid while
-- notes.file_hash still equals the file_hash recorded with it (a later disk re-index changes it).
CREATE TABLE IF NOT EXISTS note_content (
    path TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    file_hash TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class NoteRecord:
    path: str
    file_hash: str
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class PendingChunk:
    id: str
    content_hash: str
    chunk: Chunk


def chunk_from_json(text: str) -> Chunk:
    data: dict[str, Any] = json.loads(text)
    for key in ("origins", "tags", "aliases"):
        data[key] = tuple(data.get(key) or ())
    return Chunk(**data)


class Manifest:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # check_same_thread=False: the server reads from worker threads; writes are serialised
        # by the indexer's single-writer queue.
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.db.executescript(note_scripts.SCHEMA)
        self.db.executescript(section_vectors.SCHEMA)
        self.generation = 0  # bumped by every committed transaction of this connection
        # generation → the notes whose chunks or embedded flags it changed (None: not said)
        self._journal: dict[int, frozenset[str] | None] = {}
        if self.get_meta("schema_version") is None:
            self.set_meta("schema_version", SCHEMA_VERSION)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self, touched: Iterable[str] | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction. `touched`: the notes whose chunks or embedded flags it
        changes, for caches derived per note (`notes_touched`); None when unknown."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
            # A persistent count of write transactions (the change token is per connection):
            # data derived from the manifest and saved, such as the dense snapshot, is stamped
            # with it and used only while it still matches.
            self.db.execute(
                "INSERT INTO meta(key, value) VALUES ('revision', '1') ON CONFLICT(key)"
                " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        self.generation += 1
        self._journal[self.generation] = None if touched is None else frozenset(touched)
        self._journal.pop(self.generation - JOURNAL_SIZE, None)

    def notes_touched(self, since: int) -> set[str] | None:
        """The notes this connection's transactions after generation `since` touched; None
        when one of them did not say which (or is forgotten): rebuild everything then."""
        found: set[str] = set()
        for generation in range(since + 1, self.generation + 1):
            notes = self._journal.get(generation)
            if notes is None:
                return None
            found |= notes
        return found

    def change_token(self) -> tuple[int, int]:
        """Changes when any transaction commits, in this process (`generation`) or through
        another connection (SQLite's `data_version`): derived caches compare it to rebuild."""
        return self.generation, self.db.execute("PRAGMA data_version").fetchone()[0]

    def revision(self) -> int:
        """How many write transactions this manifest has committed (any connection)."""
        value = self.get_meta("revision")
        return int(value) if value is not None and value.isdigit() else 0

    # -- meta -------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- notes ------------------------------------------------------------------------------
    def notes(self) -> dict[str, NoteRecord]:
        rows = self.db.execute("SELECT path, file_hash, mtime_ns, size FROM notes")
        return {r[0]: NoteRecord(*r) for r in rows}

    def note(self, path: str) -> NoteRecord | None:
        row = self.db.execute(
            "SELECT path, file_hash, mtime_ns, size FROM notes WHERE path=?", (path,)
        ).fetchone()
        return NoteRecord(*row) if row else None

    def touch_note(self, record: NoteRecord) -> None:
        """Same content, new mtime: remember the stat so the next scan skips the hash."""
        self.db.execute(
            "UPDATE notes SET mtime_ns=?, size=? WHERE path=?",
            (record.mtime_ns, record.size, record.path),
        )

    def replace_note(
        self,
        record: NoteRecord,
        chunks: list[Chunk],
        deps: Iterable[str],
        warnings: Iterable[tuple[str, str, str | None, int | None]],
        priority: int = 0,
    ) -> list[str]:
        """Record a note's new chunks in one transaction. Chunks whose id and content hash are
        unchanged keep their `embedded` flag. Returns the ids that are gone."""
        with self.transaction(touched=[record.path]) as db:
            old = dict(
                db.execute(
                    # `+embedded`: by note (chunks_note), not a scan of every embedded row
                    "SELECT id, content_hash FROM chunks WHERE note_path=? AND +embedded=1",
                    (record.path,),
                ).fetchall()
            )
            old_ids = {
                r[0] for r in db.execute("SELECT id FROM chunks WHERE note_path=?", (record.path,))
            }
            db.execute("DELETE FROM chunks WHERE note_path=?", (record.path,))
            db.executemany(
                "INSERT INTO chunks(id, note_path, ordinal, content_hash, embedded, priority, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        c.id,
                        record.path,
                        i,
                        c.content_hash,
                        int(old.get(c.id) == c.content_hash),
                        priority,
                        json.dumps(c.to_dict(), ensure_ascii=False, default=str),
                    )
                    for i, c in enumerate(chunks)
                ],
            )
            db.execute("DELETE FROM deps WHERE note_path=?", (record.path,))
            db.executemany(
                "INSERT OR IGNORE INTO deps(note_path, target) VALUES (?, ?)",
                [(record.path, t) for t in deps],
            )
            db.execute("DELETE FROM warnings WHERE note_path=?", (record.path,))
            db.executemany(
                "INSERT INTO warnings(note_path, code, message, target, line) VALUES (?,?,?,?,?)",
                [(record.path, *w) for w in warnings],
            )
            db.execute(
                "INSERT OR REPLACE INTO notes(path, file_hash, mtime_ns, size, indexed_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (record.path, record.file_hash, record.mtime_ns, record.size, time.time()),
            )
            note_scripts.record(db, record.path, chunks)
        return sorted(old_ids - {c.id for c in chunks})

    def delete_note(self, path: str) -> list[str]:
        with self.transaction(touched=[path]) as db:
            ids = [r[0] for r in db.execute("SELECT id FROM chunks WHERE note_path=?", (path,))]
            db.execute("DELETE FROM chunks WHERE note_path=?", (path,))
            db.execute("DELETE FROM deps WHERE note_path=?", (path,))
            db.execute("DELETE FROM warnings WHERE note_path=?", (path,))
            db.execute("DELETE FROM notes WHERE path=?", (path,))
            note_scripts.forget(db, path)
        return ids

    def dependents(self, targets: Iterable[str]) -> set[str]:
        """Notes whose recorded dependencies include any of `targets`."""
        found: set[str] = set()
        for target in targets:
            rows = self.db.execute("SELECT note_path FROM deps WHERE target=?", (target,))
            found.update(r[0] for r in rows)
        return found

    # -- chunks -----------------------------------------------------------------------------
    def chunk_ids(self, note_path: str | None = None) -> set[str]:
        if note_path is None:
            return {r[0] for r in self.db.execute("SELECT id FROM chunks")}
        rows = self.db.execute("SELECT id FROM chunks WHERE note_path=?", (note_path,))
        return {r[0] for r in rows}

    def chunk_hashes(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT id, content_hash FROM chunks").fetchall())

    def chunks(self, ids: Iterable[str], batch: int = 500) -> dict[str, Chunk]:
        """The chunks of these ids that exist, in the order given (one query per `batch`)."""
        wanted = list(dict.fromkeys(ids))
        query = "SELECT id, data FROM chunks WHERE id IN ({marks})"
        found = dict(self._rows_in(query, wanted, batch))
        return {i: chunk_from_json(found[i]) for i in wanted if i in found}

    def note_chunks(self, note_path: str) -> list[Chunk]:
        rows = self.db.execute(
            "SELECT data FROM chunks WHERE note_path=? ORDER BY ordinal", (note_path,)
        )
        return [chunk_from_json(r[0]) for r in rows]

    def embedded_chunks(self, note_path: str) -> list[Chunk]:
        """The note's chunks that the vector store holds, in note order."""
        rows = self.db.execute(
            "SELECT data FROM chunks WHERE note_path=? AND +embedded=1 ORDER BY ordinal",
            (note_path,),
        )
        return [chunk_from_json(r[0]) for r in rows]

    def pending(self, limit: int) -> list[PendingChunk]:
        """Chunks not yet in the vector store, recently changed notes first."""
        rows = self.db.execute(
            "SELECT id, content_hash, data FROM chunks WHERE embedded=0"
            " ORDER BY priority DESC, note_path, ordinal LIMIT ?",
            (limit,),
        )
        return [PendingChunk(r[0], r[1], chunk_from_json(r[2])) for r in rows]

    def mark_embedded(self, ids: Iterable[str], embedded: bool = True) -> None:
        ids = list(ids)
        with self.transaction(touched=self._notes_of(ids)) as db:
            db.executemany(
                "UPDATE chunks SET embedded=? WHERE id=?", [(int(embedded), i) for i in ids]
            )

    def _notes_of(self, ids: list[str], batch: int = 500) -> set[str]:
        query = "SELECT DISTINCT note_path FROM chunks WHERE id IN ({marks})"
        return {r[0] for r in self._rows_in(query, ids, batch)}

    def _rows_in(
        self, query: str, keys: Sequence[str], batch: int = 500
    ) -> Iterator[tuple[Any, ...]]:
        """The rows of `query`, whose `IN ({marks})` list takes `keys`, `batch` keys per
        statement (SQLite caps the parameters of one)."""
        for i in range(0, len(keys), batch):
            part = keys[i : i + batch]
            yield from self.db.execute(query.format(marks=",".join("?" * len(part))), part)

    def embedded_hashes(self) -> list[tuple[str, str]]:
        """(note path, content hash) of every chunk the vector store holds."""
        return self.db.execute(
            "SELECT note_path, content_hash FROM chunks WHERE embedded=1"
        ).fetchall()

    def embedded_unit_vectors(self) -> Iterator[tuple[str, str, bytes]]:
        """(chunk id, note path, cached vector as float32 bytes) of every chunk the vector
        store holds that has a cached vector, by id; streamed, not read into one list."""
        yield from self.db.execute(
            "SELECT c.id, c.note_path, v.vector FROM chunks c JOIN vectors v"
            " ON v.content_hash = c.content_hash WHERE c.embedded=1 ORDER BY c.id"
        )

    def embedded_ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT id FROM chunks WHERE embedded=1")}

    def counts(self) -> dict[str, int]:
        notes = self.db.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
        chunks, embedded = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(embedded), 0) FROM chunks"
        ).fetchone()
        warnings, ignored = self.db.execute(
            "SELECT COUNT(*) - COALESCE(SUM(code = ?), 0), COALESCE(SUM(code = ?), 0) "
            "FROM warnings",
            (IGNORED_CODE, IGNORED_CODE),
        ).fetchone()
        return {
            "notes": notes,
            "chunks": chunks,
            "embedded": embedded,
            "pending": chunks - embedded,
            "warnings": warnings,
            "ignored": ignored,
        }

    def ignored_files(self) -> dict[str, str]:
        """Files and folders a source's rules left out: path (a folder ends in `/`) → why."""
        rows = self.db.execute(
            "SELECT note_path, message FROM warnings WHERE code=? ORDER BY note_path",
            (IGNORED_CODE,),
        )
        return dict(rows.fetchall())

    def skipped_files(self) -> dict[str, tuple[str, str]]:
        """Files the vault listing left out (`vault/listing.py`): path → (code, why)."""
        marks = ",".join("?" * len(SKIP_CODES))
        rows = self.db.execute(
            f"SELECT note_path, code, message FROM warnings WHERE code IN ({marks})", SKIP_CODES
        )
        return {path: (code, why) for path, code, why in rows}

    def replace_skipped_files(self, skipped: dict[str, tuple[str, str]]) -> None:
        """Record the files the listing left out as warnings with no note and no chunks: they
        show in `vault-rag status` until the file is renamed or removed."""
        marks = ",".join("?" * len(SKIP_CODES))
        with self.transaction(touched=[]) as db:
            db.execute(f"DELETE FROM warnings WHERE code IN ({marks})", SKIP_CODES)
            db.executemany(
                "INSERT INTO warnings(note_path, code, message, target, line) VALUES (?,?,?,?,?)",
                [(path, code, why, None, None) for path, (code, why) in skipped.items()],
            )

    def warnings(self, note_path: str | None = None) -> list[dict[str, Any]]:
        """The warnings, repeats grouped: one entry per note, code, message and target, at its
        first line, with `count` (a note embedding one missing note 100,000 times gave a 12 MB
        reply of identical warnings)."""
        where, args = ("AND note_path=?", (note_path,)) if note_path is not None else ("", ())
        query = (
            "SELECT note_path, code, message, target, MIN(line), COUNT(*) FROM warnings "
            f"WHERE code != '{IGNORED_CODE}' {where} "
            "GROUP BY note_path, code, message, target ORDER BY MIN(rowid)"
        )
        keys = ("note", "code", "message", "target", "line", "count")
        return [dict(zip(keys, r, strict=True)) for r in self.db.execute(query, args)]

    # -- posted content (the server's `PUT /v1/notes`) ---------------------------------------
    def update_note_record(self, record: NoteRecord) -> None:
        """Replace a note's file hash and stat without touching its chunks."""
        self.db.execute(
            "UPDATE notes SET file_hash=?, mtime_ns=?, size=? WHERE path=?",
            (record.file_hash, record.mtime_ns, record.size, record.path),
        )

    def set_content_hash(self, path: str, content_hash: str, file_hash: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO note_content(path, content_hash, file_hash) VALUES (?, ?, ?)",
            (path, content_hash, file_hash),
        )

    def content_hashes(self, path: str | None = None) -> dict[str, str]:
        """Per note (or just `path`): the posted content's hash while still current, else the
        file's hash."""
        query = (
            "SELECT n.path, CASE WHEN c.file_hash = n.file_hash THEN c.content_hash"
            " ELSE n.file_hash END FROM notes n LEFT JOIN note_content c ON c.path = n.path"
        )
        if path is None:
            return dict(self.db.execute(query).fetchall())
        return dict(self.db.execute(query + " WHERE n.path=?", (path,)).fetchall())

    def mark_stale(self, paths: Iterable[str]) -> None:
        """Make the next scan re-index these notes whatever their stat. Called before the notes
        they embed change: if the process dies before they are re-resolved, the next scan
        still does it (their file hash no longer matches)."""
        self.db.executemany(
            "UPDATE notes SET file_hash='stale:' || file_hash, mtime_ns=-1, size=-1"
            " WHERE path=? AND file_hash NOT LIKE 'stale:%'",
            [(p,) for p in paths],
        )

    def note_deps(self, path: str) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT target FROM deps WHERE note_path=?", (path,))}

    def prune_content_hashes(self) -> int:
        cur = self.db.execute("DELETE FROM note_content WHERE path NOT IN (SELECT path FROM notes)")
        return cur.rowcount

    # -- vector cache -----------------------------------------------------------------------
    def cached_vectors(self, hashes: Iterable[str]) -> dict[str, list[float]]:
        """Cached vectors as Python float lists (what the vector stores take)."""
        return {h: v.tolist() for h, v in self.vector_arrays(hashes).items()}

    def vector_arrays(self, hashes: Iterable[str], batch: int = 500) -> dict[str, np.ndarray]:
        """Cached vectors as float32 arrays, fetched `batch` hashes per query: the note
        centroids read every vector of a vault at once, where per-hash lookups and Python
        float lists cost seconds at tens of thousands of units. Past `_WHOLE_TABLE` hashes the
        table is read in one pass into one buffer (a 72k-vector index: 1.0 s -> 0.3 s)."""
        wanted = sorted(set(hashes))
        if len(wanted) > _WHOLE_TABLE:
            return self._vectors_in_one_pass(set(wanted))
        query = "SELECT content_hash, vector FROM vectors WHERE content_hash IN ({marks})"
        rows = self._rows_in(query, wanted, batch)
        return {h: np.frombuffer(blob, dtype=np.float32) for h, blob in rows}

    def unit_vectors(self, ids: Iterable[str], batch: int = 500) -> dict[str, np.ndarray]:
        """Cached vectors by chunk id (those that have one)."""
        query = (
            "SELECT c.id, v.vector FROM chunks c JOIN vectors v"
            " ON v.content_hash = c.content_hash WHERE c.id IN ({marks})"
        )
        rows = self._rows_in(query, list(dict.fromkeys(ids)), batch)
        return {c: np.frombuffer(blob, dtype=np.float32) for c, blob in rows}

    def _vectors_in_one_pass(self, wanted: set[str]) -> dict[str, np.ndarray]:
        keys: list[str] = []
        blobs: list[bytes] = []
        for content_hash, blob in self.db.execute("SELECT content_hash, vector FROM vectors"):
            if content_hash in wanted:
                keys.append(content_hash)
                blobs.append(blob)
        if not keys or len({len(b) for b in blobs}) != 1:  # (one dimension per index)
            return {h: np.frombuffer(b, dtype=np.float32) for h, b in zip(keys, blobs, strict=True)}
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(keys), -1)
        return dict(zip(keys, matrix, strict=True))

    def cache_vectors(self, vectors: dict[str, list[float]]) -> None:
        # Touches no note: a content hash's vector never changes, and a unit only counts once
        # it is marked embedded (which names its note).
        with self.transaction(touched=()) as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors(content_hash, vector) VALUES (?, ?)",
                [(h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in vectors.items()],
            )

    def prune_vectors(self) -> int:
        """Drop cached vectors (and section vectors) no chunk uses any more."""
        # The unused hashes are found on the key's index (a scan of the table itself reads every
        # vector's bytes), then deleted by key.
        cur = self.db.execute(
            "DELETE FROM vectors WHERE content_hash IN (SELECT v.content_hash FROM vectors v"
            " WHERE v.content_hash NOT IN (SELECT content_hash FROM chunks))"
        )
        section_vectors.prune(self.db)
        return cur.rowcount

    # -- section vectors (`index/section_vectors.py`) ---------------------------------------
    def section_vectors(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Section matrices (normalised rows) of these units that have several sections."""
        wanted = list(dict.fromkeys(hashes))
        return section_vectors.matrices(self._rows_in(section_vectors.LOAD, wanted))

    def sections_present(self, hashes: Sequence[str]) -> set[str]:
        """Which of these units have a section row."""
        wanted = list(dict.fromkeys(hashes))
        return {r[0] for r in self._rows_in(section_vectors.PRESENT, wanted)}

    def sections_missing_count(self) -> int:
        return section_vectors.missing_count(self.db)

    def sections_missing(self, limit: int) -> list[Chunk]:
        return [chunk_from_json(data) for data in section_vectors.missing(self.db, limit)]

    def store_section_vectors(
        self, rows: Sequence[tuple[str, np.ndarray | None]], notes: Iterable[str]
    ) -> None:
        # Names the units' notes: the citation cache reloads them with their sections.
        with self.transaction(touched=notes) as db:
            section_vectors.store(db, rows)

    def script_totals(self) -> dict[str, int]:
        """Units of text per writing system over the indexed notes (`index/note_scripts.py`)."""
        return dict(note_scripts.totals(self.db))

    def backfill_scripts(self) -> int:
        """Count the scripts of notes indexed before they were counted, from their chunks.
        Derived data: written without a revision bump, so no saved snapshot goes stale."""
        paths = note_scripts.missing(self.db)
        if not paths:
            return 0
        chunks = {path: self.note_chunks(path) for path in paths}
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for path in paths:
                note_scripts.record(self.db, path, chunks[path])
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return len(paths)

    def clear(self) -> None:
        """Forget everything (for a rebuild with another model)."""
        with self.transaction() as db:
            for table in ("notes", "chunks", "deps", "warnings", "vectors", "note_content"):
                db.execute(f"DELETE FROM {table}")
            note_scripts.forget(db)
            section_vectors.forget(db)
