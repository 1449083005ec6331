"""Lexical (BM25) half of hybrid retrieval, persisted in the data dir.

Storage: one SQLite file (WAL). `vocab` maps each token ever seen to a dense integer id (append
only); `docs` holds per chunk id its token list as a blob of those ids (little-endian int32, in
text order), note path, normalised tags, the caller's metadata as JSON, and `gen`, the
generation that last wrote the row. Text is not stored: the manifest is the source of truth for
it, and if `TOKENIZER_VERSION` changes the rows are dropped so `Indexer.reconcile` re-adds them.

Change log: every write bumps `meta.generation` in its transaction and stamps the rows it
writes with it; a delete leaves a tombstone in `gone` (id, generation). So any reader that
knows the index at generation g can catch up by reading only what changed after g — in this
process (the server's writer thread) or in another (the CLI while a server runs) alike.
`meta.floor` is the generation below which tombstones were pruned (or everything was cleared):
a reader older than it loads afresh.

Search: `bm25_postings.Postings`, term frequencies in memory with Lucene BM25 scores computed
at query time (bm25s' numbers, bit for bit). A search whose state is older than the database
catches up (under a lock; concurrent readers keep the immutable state they hold), which costs
the changed rows, not the whole index. A state is saved next to the database in a directory
named after (database instance, generation): after a full build, by `persist()` (the server's
writer when idle, the end of `vault-rag index`), and a fresh process loads the newest one and
catches up from it instead of building from every row.

Filters (`folder`, `tag`) are boolean masks over the state's slots, cached per value.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vault_rag.index.bm25.lexical_snapshot import Snapshots
from vault_rag.index.bm25.postings import Postings, Row, tokens_of
from vault_rag.index.bm25.tokenize import TOKENIZER_VERSION, tokenize

log = logging.getLogger(__name__)

DB_FILE = "lexical.sqlite3"
SNAPSHOT_DIR = "lexical.bm25"  # saved states (`lexical_snapshot.py`)
# Pooled SQLite connections kept open between uses (see `LexicalIndex._connection`)
MAX_IDLE_CONNECTIONS = 4
SEP = "\n"  # joins a chunk's tags in one column (a tag has no line break)
# A catch-up of more rows than this share of the index builds afresh instead (vectorised).
_REBUILD_SHARE = 0.5

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vocab (id INTEGER PRIMARY KEY, token TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS docs (
    id TEXT PRIMARY KEY,
    note_path TEXT,
    tags TEXT NOT NULL,     -- normalised tags (lower-case, no '#'), newline-joined
    toks BLOB NOT NULL,     -- vocab ids, little-endian int32, in text order
    meta TEXT NOT NULL,     -- caller's metadata as JSON
    gen INTEGER NOT NULL DEFAULT 0  -- generation of the write that stored this row
);
CREATE INDEX IF NOT EXISTS docs_note ON docs(note_path);
CREATE TABLE IF NOT EXISTS gone (id TEXT PRIMARY KEY, gen INTEGER NOT NULL);
"""


def normalize_tag(tag: object) -> str:
    """Obsidian tags are case-insensitive and written with or without '#'."""
    return str(tag).strip().lstrip("#").lower()


def _tags_of(metadata: Mapping[str, Any]) -> list[str]:
    raw = metadata.get("tags") or ()
    items = [raw] if isinstance(raw, str) else list(raw)
    return sorted({t for t in (normalize_tag(x) for x in items) if t})


def _folder_prefix(folder: str) -> str:
    return folder.replace("\\", "/").strip("/")


@dataclass(frozen=True)
class _Stamp:
    instance: str
    generation: int
    floor: int  # changes before this generation may be missing from the log


@dataclass(frozen=True)
class _State:
    """The index as of one generation; never modified once published."""

    instance: str
    generation: int
    postings: Postings


def _filter(prefix: str, wanted: str) -> Callable[[Row], bool]:
    under, nested = prefix + "/", wanted + "/"

    def keep(row: Row) -> bool:
        path, tags = row
        if prefix and not (path == prefix or (path or "").startswith(under)):
            return False
        # Tag "ue" matches "ue" and nested "ue/rendering", like Obsidian's tag search.
        return not wanted or any(t == wanted or t.startswith(nested) for t in tags.split(SEP))

    return keep


class LexicalIndex:
    """BM25 over chunk tokens. Thread-safe: one writer and concurrent readers per process."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.db_path = self.data_dir / DB_FILE
        self.snapshot_root = self.data_dir / SNAPSHOT_DIR
        self._idle: list[sqlite3.Connection] = []  # the pool (see `_connection`)
        self._closed = False
        self._conns_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._state: _State | None = None
        self._saved: tuple[str, int] | None = None  # (instance, generation) on disk, if known
        self._snapshots = Snapshots(self.snapshot_root)
        with self._transaction() as db:  # the schema itself is created in _conn
            self._init_meta(db)

    # -- connections ------------------------------------------------------------------------
    def _open_connection(self) -> sqlite3.Connection:
        # check_same_thread=False: a pooled connection serves one thread at a time, but not
        # always the same one (the server's worker threads come and go).
        conn = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")  # another process may be writing
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA)
        return conn

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection of the pool for one use: a sqlite3 connection must not interleave
        transactions from several threads. At most `MAX_IDLE_CONNECTIONS` stay open between
        uses (each holds three files: the database, its -wal and -shm); more at once are opened
        for the burst and closed after it. (One per thread, kept for the thread's life, leaked
        ~40 files a burst of 40 searches: the server's worker threads are new each burst.)"""
        with self._conns_lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open_connection()
        try:
            yield conn
        finally:
            with self._conns_lock:
                keep = not self._closed and len(self._idle) < MAX_IDLE_CONNECTIONS
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        with self._connection() as db:
            # IMMEDIATE takes the write lock up front (no upgrade deadlock between processes);
            # a deferred read transaction sees one consistent WAL snapshot.
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _query(self, sql: str) -> list[Any]:
        with self._connection() as db:
            return db.execute(sql).fetchall()

    def close(self) -> None:
        """Close the idle connections; one in use is closed when its use ends."""
        with self._conns_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> LexicalIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta -------------------------------------------------------------------------------
    def _init_meta(self, db: sqlite3.Connection) -> None:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        # A fresh id per database file, so a snapshot left by a deleted-and-recreated database
        # (generation back at 0) can never be mistaken for this one's.
        db.execute("INSERT OR IGNORE INTO meta VALUES ('instance', ?)", (uuid.uuid4().hex,))
        db.execute("INSERT OR IGNORE INTO meta VALUES ('generation', '0')")
        db.execute("INSERT OR IGNORE INTO meta VALUES ('floor', '0')")
        columns = {r[1] for r in db.execute("PRAGMA table_info(docs)")}
        if "gen" not in columns:  # a database from before the change log: no reader may catch up
            db.execute("ALTER TABLE docs ADD COLUMN gen INTEGER NOT NULL DEFAULT 0")
            self._set_generation(db, self._generation(db) + 1, floor=True)
        db.execute("CREATE INDEX IF NOT EXISTS docs_gen ON docs(gen)")
        if meta.get("tokenizer") != TOKENIZER_VERSION:
            if db.execute("SELECT 1 FROM docs LIMIT 1").fetchone():
                log.warning("tokeniser changed: lexical index cleared, reconcile will refill it")
                self._clear(db)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tokenizer', ?)", (TOKENIZER_VERSION,))

    @staticmethod
    def _generation(db: sqlite3.Connection) -> int:
        row = db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0])

    @staticmethod
    def _set_generation(db: sqlite3.Connection, generation: int, floor: bool = False) -> None:
        db.execute("UPDATE meta SET value=? WHERE key='generation'", (str(generation),))
        if floor:
            db.execute("UPDATE meta SET value=? WHERE key='floor'", (str(generation),))

    @staticmethod
    def _stamp(db: sqlite3.Connection) -> _Stamp:
        rows = dict(
            db.execute(
                "SELECT key, value FROM meta WHERE key IN ('instance', 'generation', 'floor')"
            )
        )
        return _Stamp(rows["instance"], int(rows["generation"]), int(rows["floor"]))

    # -- writes -----------------------------------------------------------------------------
    def upsert(self, items: Iterable[tuple[str, str, Mapping[str, Any]]]) -> None:
        """Insert or replace chunks given as (id, text, metadata). `metadata["note_path"]` is
        what folder filters use; `metadata["tags"]` what tag filters use.
        """
        # Tokenise before taking the write lock: it is the slow part.
        docs = [(chunk_id, tokenize(text), metadata) for chunk_id, text, metadata in items]
        if not docs:
            return
        with self._write_lock, self._transaction() as db:
            generation = self._generation(db) + 1
            vocab = self._vocab_ids(db, {t for _, tokens, _ in docs for t in tokens})
            rows = [
                (
                    chunk_id,
                    metadata.get("note_path"),
                    SEP.join(_tags_of(metadata)),
                    np.array([vocab[t] for t in tokens], dtype="<i4").tobytes(),
                    json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, default=str),
                    generation,
                )
                for chunk_id, tokens, metadata in docs
            ]
            before = db.total_changes
            # The WHERE skips identical rows, so re-upserting unchanged chunks (a reconcile)
            # writes nothing and leaves the generation alone: no reader has anything to redo.
            db.executemany(
                """INSERT INTO docs(id, note_path, tags, toks, meta, gen)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET note_path=excluded.note_path, tags=excluded.tags,
                    toks=excluded.toks, meta=excluded.meta, gen=excluded.gen
                WHERE docs.note_path IS NOT excluded.note_path OR docs.tags != excluded.tags
                    OR docs.toks != excluded.toks OR docs.meta != excluded.meta""",
                rows,
            )
            if db.total_changes != before:
                db.executemany("DELETE FROM gone WHERE id=?", [(r[0],) for r in rows])
                self._set_generation(db, generation)

    @staticmethod
    def _vocab_ids(db: sqlite3.Connection, tokens: set[str]) -> dict[str, int]:
        """Ids for `tokens`, adding new ones (inside the write transaction, so ids are unique
        across processes; rowids are never removed, so they stay dense and stable)."""
        todo = sorted(tokens)  # sorted: the same writes give the same ids
        db.executemany("INSERT OR IGNORE INTO vocab(token) VALUES (?)", ((t,) for t in todo))
        return LexicalIndex._known_ids(db, todo)

    @staticmethod
    def _known_ids(db: sqlite3.Connection, tokens: list[str]) -> dict[str, int]:
        known: dict[str, int] = {}
        for i in range(0, len(tokens), 500):
            part = tokens[i : i + 500]
            marks = ",".join("?" * len(part))
            known.update(db.execute(f"SELECT token, id FROM vocab WHERE token IN ({marks})", part))
        return known

    def delete(self, ids: Iterable[str]) -> int:
        """Remove chunks by id; unknown ids are ignored. Returns how many were removed."""
        wanted = sorted(set(ids))
        if not wanted:
            return 0
        with self._write_lock, self._transaction() as db:
            generation = self._generation(db) + 1
            removed = 0
            for chunk_id in wanted:
                if db.execute("DELETE FROM docs WHERE id=?", (chunk_id,)).rowcount:
                    db.execute("INSERT OR REPLACE INTO gone VALUES (?, ?)", (chunk_id, generation))
                    removed += 1
            if removed:
                self._set_generation(db, generation)
        return removed

    def clear(self) -> None:
        with self._write_lock, self._transaction() as db:
            self._clear(db)

    def _clear(self, db: sqlite3.Connection) -> None:
        # No tombstones: the floor makes every older reader start afresh (from no rows).
        db.execute("DELETE FROM docs")
        db.execute("DELETE FROM gone")
        self._set_generation(db, self._generation(db) + 1, floor=True)

    # -- reads ------------------------------------------------------------------------------
    def ids(self) -> set[str]:
        return {r[0] for r in self._query("SELECT id FROM docs")}

    def count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM docs")[0][0])

    def search(
        self, query: str, k: int = 20, *, folder: str | None = None, tag: str | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) best first; only chunks matching at least one query token.

        `folder` keeps chunks whose note_path is in that folder or below it; `tag` keeps chunks
        carrying that tag or a nested one (``ue`` matches ``ue/rendering``).
        """
        if k <= 0:
            return []
        # Repeating a query word should not weigh it twice (BM25 sums per query token).
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms:
            return []
        with self._connection() as db:
            known = self._known_ids(db, terms)
        term_ids = [known[t] for t in terms if t in known]  # in query order, as bm25s sums
        if not term_ids:
            return []
        postings = self._current().postings
        scores = postings.scores(term_ids)
        prefix = _folder_prefix(folder) if folder else ""
        wanted = normalize_tag(tag) if tag else ""
        if prefix or wanted:
            keep = postings.mask((prefix, wanted), _filter(prefix, wanted))
            scores = np.where(keep, scores, 0.0)
        hits = np.flatnonzero(scores > 0)
        if hits.size > k:
            # Keep everything tied with the k-th score so the id tie-break below is stable.
            kth = np.partition(scores[hits], hits.size - k)[hits.size - k]
            hits = hits[scores[hits] >= kth]
        ids = postings.ids
        ranked = sorted(((ids[i], float(scores[i])) for i in hits), key=lambda h: (-h[1], h[0]))
        return ranked[:k]

    def idf(self, terms: Sequence[str]) -> dict[str, float]:
        """BM25's idf of each token (`tokenize` output) the index knows; unknown tokens are
        left out. For weighing query words when locating the cited span (retrieval/cite.py)."""
        wanted = list(dict.fromkeys(terms))
        if not wanted:
            return {}
        with self._connection() as db:
            known = self._known_ids(db, wanted)
        postings = self._current().postings
        n_docs = postings.n_alive
        out: dict[str, float] = {}
        for token, term_id in known.items():
            df = postings.postings(term_id)[0].size
            if df:
                out[token] = math.log1p((n_docs - df + 0.5) / (df + 0.5))
        return out

    def known(self, terms: Sequence[str]) -> frozenset[str]:
        """The tokens among `terms` that some live chunk contains (the index's vocabulary), for
        comparing vocabularies across collections (retrieval/routing.py)."""
        return frozenset(self.idf(terms))

    # -- the in-memory state ----------------------------------------------------------------
    def _current(self) -> _State:
        state = self._state
        if state is not None:
            with self._connection() as db:
                stamp = self._stamp(db)
            if (stamp.instance, stamp.generation) == (state.instance, state.generation):
                return state
        with self._build_lock:
            # Another thread may have caught up while we waited; _refresh re-reads the stamp.
            self._state = self._refresh()
            return self._state

    def _refresh(self) -> _State:
        # One read transaction: the stamp and the rows read are one database state.
        with self._transaction(write=False) as db:
            stamp = self._stamp(db)
            state = self._state
            if state is not None and (state.instance, state.generation) == (
                stamp.instance,
                stamp.generation,
            ):
                return state
            if not self._can_catch_up(state, stamp):
                state = self._read_saved(stamp)
            if state is not None:
                try:
                    caught = self._catch_up(db, state, stamp)
                except Exception:  # never leave search broken: a full build is always right
                    log.exception("lexical catch-up failed; building afresh")
                    caught = None
                if caught is not None:
                    return caught
            built = self._build(db, stamp)
        self._save(built)
        return built

    @staticmethod
    def _can_catch_up(state: _State | None, stamp: _Stamp) -> bool:
        return (
            state is not None
            and state.instance == stamp.instance
            and stamp.floor <= state.generation <= stamp.generation
        )

    def _catch_up(self, db: sqlite3.Connection, state: _State, stamp: _Stamp) -> _State | None:
        """`state` brought to `stamp` from the change log; None when building afresh is
        cheaper (most rows changed)."""
        since = state.generation
        changed = db.execute(
            "SELECT id, note_path, tags, toks FROM docs WHERE gen > ?", (since,)
        ).fetchall()
        if len(changed) > max(1000, _REBUILD_SHARE * state.postings.n_alive):
            return None
        gone = [r[0] for r in db.execute("SELECT id FROM gone WHERE gen > ?", (since,))]
        postings = state.postings.with_changes(
            gone, [(i, (path, tags), tokens_of(toks)) for i, path, tags, toks in changed]
        )
        if postings.needs_compaction():
            postings = postings.compacted()
        return _State(stamp.instance, stamp.generation, postings)

    @staticmethod
    def _build(db: sqlite3.Connection, stamp: _Stamp) -> _State:
        rows = db.execute("SELECT id, note_path, tags, toks FROM docs ORDER BY id").fetchall()
        postings = Postings.build(
            [r[0] for r in rows], [(r[1], r[2]) for r in rows], [tokens_of(r[3]) for r in rows]
        )
        return _State(stamp.instance, stamp.generation, postings)

    # -- snapshots on disk ------------------------------------------------------------------
    def persist(self) -> bool:
        """Save the current state unless the newest snapshot on disk is already it, so the
        next process loads it instead of catching up or building. True when one was written."""
        with self._connection() as db:
            stamp = self._stamp(db)
        if self._saved == (stamp.instance, stamp.generation):
            return False
        saved = self._snapshots.generations(stamp.instance)
        if saved and max(saved) == stamp.generation:
            self._saved = (stamp.instance, stamp.generation)
            return False
        return self._save(self._current())

    def _read_saved(self, stamp: _Stamp) -> _State | None:
        """The newest saved state this database can catch up from, if any."""
        usable = [
            g
            for g in self._snapshots.generations(stamp.instance)
            if stamp.floor <= g <= stamp.generation
        ]
        if not usable:
            return None
        postings = self._snapshots.load(stamp.instance, max(usable))
        if postings is None:
            return None
        self._saved = (stamp.instance, max(usable))
        return _State(stamp.instance, max(usable), postings)

    def _save(self, state: _State) -> bool:
        """Save `state`, then prune the tombstones a reader of it no longer needs (a reader
        older than it loads it instead: `floor`)."""
        if not self._snapshots.save(state.instance, state.generation, state.postings):
            return False
        self._saved = (state.instance, state.generation)
        with suppress(sqlite3.Error), self._write_lock, self._transaction() as db:
            if self._stamp(db).instance == state.instance:
                db.execute("DELETE FROM gone WHERE gen <= ?", (state.generation,))
                db.execute(
                    "UPDATE meta SET value=? WHERE key='floor' AND CAST(value AS INTEGER) < ?",
                    (str(state.generation), state.generation),
                )
        return True
