"""Lexical (BM25) half of hybrid retrieval, persisted in the data dir.

Storage: one SQLite file (WAL). `vocab` maps each token ever seen to a dense integer id (append
only); `docs` holds per chunk id its token list as a blob of those ids (little-endian int32, in
text order), note path, normalised tags and the caller's metadata as JSON. Storing ids rather
than token text lets a rebuild go from rows to the BM25 matrix with numpy alone: no Python
object per token. Text is not stored: the manifest is the source of truth for it, and if
`TOKENIZER_VERSION` changes the rows are dropped so `Indexer.reconcile` re-adds them.

Search: bm25s builds a static index, so every write bumps a generation counter in the same
transaction, and a search whose in-memory index was built at an older generation rebuilds it
(under a lock; concurrent readers keep using the immutable snapshot they hold). The counter
lives in SQLite, so another process sees this one's writes at its next search. A built index is
saved next to the database in a directory named after (database instance, generation), and a
restart whose generation is unchanged loads it instead of rebuilding (~10x faster at 50k
chunks, see `scripts/bench_lexical.py`).

Filters (`folder`, `tag`) are boolean masks over the snapshot's documents, cached per value.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from bm25s.tokenization import Tokenized

from vault_rag.index.tokenize import TOKENIZER_VERSION, tokenize

log = logging.getLogger(__name__)

DB_FILE = "lexical.sqlite3"
SNAPSHOT_DIR = "lexical.bm25"
# Part of the snapshot directory name: bump when BM25 parameters or the saved layout change.
SNAPSHOT_FORMAT = "1"
SEP = "\n"  # joins a chunk's tags in one column (a tag has no line break)
_MASK_CACHE = 32  # filter masks kept per snapshot (folder/tag combinations)
_STALE_TMP_S = 3600.0  # an unfinished snapshot dir older than this is a crashed writer's

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vocab (id INTEGER PRIMARY KEY, token TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS docs (
    id TEXT PRIMARY KEY,
    note_path TEXT,
    tags TEXT NOT NULL,     -- normalised tags (lower-case, no '#'), newline-joined
    toks BLOB NOT NULL,     -- vocab ids, little-endian int32, in text order
    meta TEXT NOT NULL      -- caller's metadata as JSON
);
CREATE INDEX IF NOT EXISTS docs_note ON docs(note_path);
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
class FlatCorpus:
    """Token ids of all documents, concatenated, plus each document's length."""

    flat: np.ndarray
    lengths: np.ndarray

    @classmethod
    def from_lists(cls, docs: list[list[int]]) -> FlatCorpus:
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        flat = np.fromiter(chain.from_iterable(docs), np.int64, int(lengths.sum()))
        return cls(flat, lengths)

    def __len__(self) -> int:
        return len(self.lengths)


class FastBM25(bm25s.BM25):
    """bm25s with vectorised index construction through `build_index_from_ids`, which its docs
    invite overriding: stock bm25s loops in Python per document, this does the same arithmetic
    for its default Lucene variant with numpy. Scoring, save and load are untouched bm25s; a
    test checks scores against stock bm25s. Takes `Tokenized(FlatCorpus, vocab)` or lists."""

    def build_index_from_ids(
        self,
        unique_token_ids: list[int],
        corpus_token_ids: list[list[int]] | FlatCorpus,
        show_progress: bool = True,
        leave_progress: bool = False,
    ) -> dict[str, Any]:
        if self.method != "lucene" or self.idf_method not in (None, "lucene"):
            raise ValueError("FastBM25 implements only the Lucene BM25 variant")
        corpus = (
            corpus_token_ids
            if isinstance(corpus_token_ids, FlatCorpus)
            else FlatCorpus.from_lists(corpus_token_ids)
        )
        n_docs = len(corpus)
        # Every vocab id gets a column, even one no current chunk uses (its chunks were deleted):
        # bm25s rejects a query id past the last column.
        n_vocab = max(max(unique_token_ids, default=-1), int(corpus.flat.max(initial=-1))) + 1
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), corpus.lengths)
        # One entry per distinct (term, doc), sorted by term then doc: exactly CSC order.
        pairs, tf = np.unique(corpus.flat * n_docs + doc_of, return_counts=True)
        term, doc = np.divmod(pairs, n_docs)
        df = np.bincount(term, minlength=n_vocab)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))  # bm25s' Lucene idf, vectorised
        doc_len = corpus.lengths[doc] / corpus.lengths.mean()
        data = idf[term] * (tf / (self.k1 * ((1 - self.b) + self.b * doc_len) + tf))
        self.nonoccurrence_array = None
        return {
            "data": data.astype(self.dtype),
            "indices": doc.astype(self.int_dtype),
            "indptr": np.concatenate(([0], np.cumsum(df))),
            "num_docs": n_docs,
        }


@dataclass(frozen=True)
class _Snapshot:
    """A built index, never modified once published (`masks` is only a cache)."""

    stamp: str
    model: bm25s.BM25 | None  # None when no chunk has a token
    rows: list[tuple[str, str | None, str]]  # (id, note_path, tags) in index order
    ids: list[str]
    masks: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)

    def mask(self, folder: str | None, tag: str | None) -> np.ndarray | None:
        prefix = _folder_prefix(folder) if folder else ""
        wanted = normalize_tag(tag) if tag else ""
        if not prefix and not wanted:
            return None
        cached = self.masks.get((prefix, wanted))
        if cached is not None:
            return cached
        under, nested = prefix + "/", wanted + "/"

        def keep(path: str | None, tags: str) -> bool:
            if prefix and not (path == prefix or (path or "").startswith(under)):
                return False
            # Tag "ue" matches "ue" and nested "ue/rendering", like Obsidian's tag search.
            return not wanted or any(t == wanted or t.startswith(nested) for t in tags.split(SEP))

        mask = np.fromiter((keep(r[1], r[2]) for r in self.rows), dtype=bool, count=len(self.rows))
        if len(self.masks) < _MASK_CACHE:
            self.masks[(prefix, wanted)] = mask
        return mask


class LexicalIndex:
    """BM25 over chunk tokens. Thread-safe: one writer and concurrent readers per process."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.db_path = self.data_dir / DB_FILE
        self.snapshot_root = self.data_dir / SNAPSHOT_DIR
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._snapshot: _Snapshot | None = None
        with self._transaction() as db:  # the schema itself is created in _conn
            self._init_meta(db)

    # -- connections ------------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        # One connection per thread: a sqlite3 connection must not interleave transactions
        # from several threads. check_same_thread=False only so close() can close them all.
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=10000")  # another process may be writing
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(SCHEMA)
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        db = self._conn()
        # IMMEDIATE takes the write lock up front (no upgrade deadlock between processes);
        # a deferred read transaction sees one consistent WAL snapshot.
        db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()

    def __enter__(self) -> LexicalIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta -------------------------------------------------------------------------------
    @staticmethod
    def _bump(db: sqlite3.Connection) -> None:
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")

    def _init_meta(self, db: sqlite3.Connection) -> None:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        # A fresh id per database file, so a snapshot left by a deleted-and-recreated database
        # (generation back at 0) can never be mistaken for this one's.
        db.execute("INSERT OR IGNORE INTO meta VALUES ('instance', ?)", (uuid.uuid4().hex,))
        db.execute("INSERT OR IGNORE INTO meta VALUES ('generation', '0')")
        if meta.get("tokenizer") != TOKENIZER_VERSION:
            if db.execute("SELECT 1 FROM docs LIMIT 1").fetchone():
                log.warning("tokeniser changed: lexical index cleared, reconcile will refill it")
                db.execute("DELETE FROM docs")
                self._bump(db)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tokenizer', ?)", (TOKENIZER_VERSION,))

    def _stamp(self, db: sqlite3.Connection) -> str:
        rows = dict(
            db.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'generation')")
        )
        return f"{rows['instance']}-{rows['generation']}-{SNAPSHOT_FORMAT}"

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
            vocab = self._vocab_ids(db, {t for _, tokens, _ in docs for t in tokens})
            rows = [
                (
                    chunk_id,
                    metadata.get("note_path"),
                    SEP.join(_tags_of(metadata)),
                    np.array([vocab[t] for t in tokens], dtype="<i4").tobytes(),
                    json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, default=str),
                )
                for chunk_id, tokens, metadata in docs
            ]
            before = db.total_changes
            # The WHERE skips identical rows, so re-upserting unchanged chunks (a reconcile)
            # does not bump the generation and force a rebuild.
            db.executemany(
                """INSERT INTO docs(id, note_path, tags, toks, meta) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET note_path=excluded.note_path, tags=excluded.tags,
                    toks=excluded.toks, meta=excluded.meta
                WHERE docs.note_path IS NOT excluded.note_path OR docs.tags != excluded.tags
                    OR docs.toks != excluded.toks OR docs.meta != excluded.meta""",
                rows,
            )
            if db.total_changes != before:
                self._bump(db)

    @staticmethod
    def _vocab_ids(db: sqlite3.Connection, tokens: set[str]) -> dict[str, int]:
        """Ids for `tokens`, adding new ones (inside the write transaction, so ids are unique
        across processes; rowids are never removed, so they stay dense and stable)."""
        todo = sorted(tokens)  # sorted: the same writes give the same ids
        db.executemany("INSERT OR IGNORE INTO vocab(token) VALUES (?)", ((t,) for t in todo))
        known: dict[str, int] = {}
        for i in range(0, len(todo), 500):
            part = todo[i : i + 500]
            marks = ",".join("?" * len(part))
            known.update(db.execute(f"SELECT token, id FROM vocab WHERE token IN ({marks})", part))
        return known

    def delete(self, ids: Iterable[str]) -> int:
        """Remove chunks by id; unknown ids are ignored. Returns how many were removed."""
        return self._delete("DELETE FROM docs WHERE id=?", [(i,) for i in ids])

    def clear(self) -> None:
        self._delete("DELETE FROM docs", [()])

    def _delete(self, sql: str, params: list[tuple[str, ...]]) -> int:
        if not params:
            return 0
        with self._write_lock, self._transaction() as db:
            before = db.total_changes
            db.executemany(sql, params)
            removed = db.total_changes - before
            if removed:
                self._bump(db)
        return removed

    # -- reads ------------------------------------------------------------------------------
    def ids(self) -> set[str]:
        return {r[0] for r in self._conn().execute("SELECT id FROM docs")}

    def count(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    def search(
        self, query: str, k: int = 20, *, folder: str | None = None, tag: str | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) best first; only chunks matching at least one query token.

        `folder` keeps chunks whose note_path is in that folder or below it; `tag` keeps chunks
        carrying that tag or a nested one (``ue`` matches ``ue/rendering``).
        """
        if k <= 0:
            return []
        # Repeating a query word should not weigh it twice (bm25s sums per query token).
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms:
            return []
        snap = self._current()
        if snap.model is None:
            return []
        token_ids = snap.model.get_tokens_ids(terms)
        if not token_ids:
            return []
        scores = snap.model.get_scores_from_ids(token_ids)
        keep = snap.mask(folder, tag)
        if keep is not None:
            scores = np.where(keep, scores, 0.0)
        hits = np.flatnonzero(scores > 0)
        if hits.size > k:
            # Keep everything tied with the k-th score so the id tie-break below is stable.
            kth = np.partition(scores[hits], hits.size - k)[hits.size - k]
            hits = hits[scores[hits] >= kth]
        ranked = sorted(
            ((snap.ids[i], float(scores[i])) for i in hits), key=lambda h: (-h[1], h[0])
        )
        return ranked[:k]

    # -- snapshot ---------------------------------------------------------------------------
    def _current(self) -> _Snapshot:
        snap = self._snapshot
        if snap is not None and snap.stamp == self._stamp(self._conn()):
            return snap
        with self._build_lock:
            # Another thread may have rebuilt while we waited; _load re-reads the stamp.
            snap = self._load()
            self._snapshot = snap
            return snap

    def _load(self) -> _Snapshot:
        # One read transaction: stamp, rows, token ids and vocab are one database state.
        with self._transaction(write=False) as db:
            stamp = self._stamp(db)
            current = self._snapshot
            if current is not None and current.stamp == stamp:
                return current
            rows: list[tuple[str, str | None, str]] = db.execute(
                "SELECT id, note_path, tags FROM docs ORDER BY id"
            ).fetchall()
            ids = [r[0] for r in rows]
            model = self._read_saved(stamp, ids) if rows else None
            blobs: list[bytes] = []
            vocab: dict[str, int] = {}
            if rows and model is None:
                blobs = [r[0] for r in db.execute("SELECT toks FROM docs ORDER BY id")]
                vocab = dict(db.execute("SELECT token, id FROM vocab"))
        if rows and model is None:
            lengths = np.fromiter((len(b) // 4 for b in blobs), np.int64, len(blobs))
            flat = np.frombuffer(b"".join(blobs), dtype="<i4").astype(np.int64)
            if flat.size:  # (bm25s cannot index a corpus without a single token)
                model = FastBM25()
                corpus = Tokenized(ids=FlatCorpus(flat, lengths), vocab=vocab)
                model.index(corpus, show_progress=False)  # type: ignore[arg-type]
                self._save(stamp, model, ids)
        return _Snapshot(stamp, model, rows, ids)

    def _read_saved(self, stamp: str, ids: list[str]) -> bm25s.BM25 | None:
        path = self.snapshot_root / stamp
        try:
            saved_ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
            if saved_ids != ids:
                return None
            # mmap=False: a mapped file would keep the directory undeletable on Windows.
            return bm25s.BM25.load(path, mmap=False, show_progress=False)
        except Exception as exc:  # a cache: missing, partial or foreign files mean "rebuild"
            log.debug("lexical snapshot not loaded: %s", exc)
            return None

    def _save(self, stamp: str, model: bm25s.BM25, ids: list[str]) -> None:
        """Best effort: write to a temp dir, rename into place (atomic), drop older snapshots."""
        final = self.snapshot_root / stamp
        tmp = self.snapshot_root / f".tmp-{stamp}-{uuid.uuid4().hex[:8]}"
        try:
            model.save(tmp, show_progress=False)
            (tmp / "ids.json").write_text(json.dumps(ids, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, final)
        except OSError as exc:  # another process saved the same stamp first, disk full, ...
            log.debug("lexical snapshot not saved: %s", exc)
            shutil.rmtree(tmp, ignore_errors=True)
            return
        for old in self.snapshot_root.iterdir():
            # Another process may be writing a .tmp- dir right now; only old ones are debris.
            with suppress(OSError):
                stale = time.time() - old.stat().st_mtime > _STALE_TMP_S
                if old.name != stamp and (stale or not old.name.startswith(".tmp-")):
                    shutil.rmtree(old, ignore_errors=True)
