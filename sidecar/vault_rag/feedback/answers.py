"""The answer store: what the assistant answered, so an answer can be rated or promoted later.

One row per answer id (the id the graph gives each answer and the client reports back). The
citations are kept as the graph reported them (vault: chunk id, note path, heading, anchor,
lines; web: url, title), so feedback can reach the cited chunks and a promoted note can link
its sources without the graph's state.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

FEEDBACK_DB = "feedback.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    answer_id TEXT PRIMARY KEY,
    thread_id TEXT,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    citations TEXT NOT NULL,   -- JSON list of citation records
    model TEXT,
    created_at REAL NOT NULL
);
"""


class UnknownAnswerError(KeyError):
    """No answer with this id was recorded (or it was recorded in another data dir)."""

    def __str__(self) -> str:
        return f"no answer with id {self.args[0]!r} is recorded in this data dir"


def connect(data_dir: Path) -> sqlite3.Connection:
    """The feedback database of a data dir (created on first use)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    # check_same_thread=False: the server reads from worker threads; every store serialises its
    # own use of the connection with a lock.
    db = sqlite3.connect(
        data_dir / FEEDBACK_DB, isolation_level=None, check_same_thread=False, timeout=10
    )
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


@dataclass(frozen=True)
class AnswerRecord:
    answer_id: str
    question: str
    answer: str
    citations: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    thread_id: str | None = None
    created_at: float = 0.0

    @property
    def chunk_ids(self) -> list[str]:
        """The cited vault chunks, in citation order, without repeats."""
        ids = (c.get("chunk_id") for c in self.citations if c.get("kind", "vault") == "vault")
        return list(dict.fromkeys(i for i in ids if i))

    def citation_keys(self) -> set[str]:
        """What a per-citation mark may name: a chunk id or a web citation's url."""
        keys = {c.get("chunk_id") or c.get("url") or "" for c in self.citations}
        return keys - {""}

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer_id": self.answer_id,
            "thread_id": self.thread_id,
            "question": self.question,
            "answer": self.answer,
            "citations": self.citations,
            "model": self.model,
            "created_at": self.created_at,
        }


class SqliteStore:
    """One connection to `feedback.sqlite3` with its tables, a lock, and `with` support."""

    schema = SCHEMA

    def __init__(self, data_dir: Path) -> None:
        self.db = connect(data_dir)
        self.db.executescript(self.schema)
        self._lock = threading.Lock()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AnswerStore(SqliteStore):
    @contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self.db

    def record(self, answer: AnswerRecord) -> AnswerRecord:
        """Store `answer`; recording the same id again updates it but keeps its first time."""
        if not answer.answer_id:
            raise ValueError("an answer needs an answer_id")
        created = answer.created_at or time.time()
        with self._locked() as db:
            db.execute(
                "INSERT INTO answers(answer_id, thread_id, question, answer, citations, model,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(answer_id) DO UPDATE SET thread_id=excluded.thread_id,"
                " question=excluded.question, answer=excluded.answer,"
                " citations=excluded.citations, model=excluded.model",
                (
                    answer.answer_id,
                    answer.thread_id,
                    answer.question,
                    answer.answer,
                    json.dumps(answer.citations, ensure_ascii=False, default=str),
                    answer.model,
                    created,
                ),
            )
        found = self.get(answer.answer_id)
        assert found is not None
        return found

    def get(self, answer_id: str) -> AnswerRecord | None:
        with self._locked() as db:
            row = db.execute(
                "SELECT answer_id, question, answer, citations, model, thread_id, created_at"
                " FROM answers WHERE answer_id=?",
                (answer_id,),
            ).fetchone()
        if row is None:
            return None
        return AnswerRecord(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])

    def require(self, answer_id: str) -> AnswerRecord:
        found = self.get(answer_id)
        if found is None:
            raise UnknownAnswerError(answer_id)
        return found


def record_answer(
    data_dir: Path,
    *,
    answer_id: str,
    question: str,
    answer: str,
    citations: Iterable[Mapping[str, Any]],
    model: str | None = None,
    thread_id: str | None = None,
    created_at: float | None = None,
) -> AnswerRecord:
    """Record one finished answer in `data_dir` (the vault's index data dir). Call it once per
    answer the user sees, with the answer id the client gets, before the client can rate it."""
    record = AnswerRecord(
        answer_id=answer_id,
        question=question,
        answer=answer,
        citations=[dict(c) for c in citations],
        model=model,
        thread_id=thread_id,
        created_at=created_at or 0.0,
    )
    with AnswerStore(data_dir) as store:
        return store.record(record)
