"""The feedback store: ratings of answers, and what they mean for each cited chunk.

Every submission is kept (`feedback`, the history). What ranking uses is `chunk_votes`: the
current vote of each answer on each chunk it cited, replaced by the answer's latest feedback,
so clicking 👍 twice or changing 👍 to 👎 never stacks votes.

How one feedback becomes chunk votes:
- 👍: every cited chunk +1, except chunks marked "this source was wrong" (−1);
- 👎 without marks: every cited chunk −1 (the answer was bad; its sources share the blame);
- 👎 with marks: only the marked chunks −1; the user pinpointed the culprits, so the other
  sources are left alone.
Marks on web citations (by url) are stored but move no chunk.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_rag.feedback.answers import AnswerRecord, AnswerStore, SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    answer_id TEXT NOT NULL,
    rating INTEGER NOT NULL CHECK (rating IN (-1, 1)),
    comment TEXT,
    wrong TEXT NOT NULL,       -- JSON list: chunk ids / urls marked "this source was wrong"
    question TEXT NOT NULL,
    chunk_ids TEXT NOT NULL,   -- JSON list: the chunks the answer cited
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS feedback_answer ON feedback(answer_id, id);
CREATE TABLE IF NOT EXISTS chunk_votes (
    answer_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    vote INTEGER NOT NULL,     -- +1 / -1
    created_at REAL NOT NULL,  -- when the vote was cast (its age decays it)
    PRIMARY KEY (answer_id, chunk_id)
);
CREATE INDEX IF NOT EXISTS chunk_votes_chunk ON chunk_votes(chunk_id);
"""

RATINGS = {"up": 1, "down": -1, "+1": 1, "-1": -1, "1": 1}


@dataclass(frozen=True)
class Vote:
    vote: int  # +1 / -1
    created_at: float  # unix time


@dataclass(frozen=True)
class Feedback:
    id: int
    answer_id: str
    rating: int
    question: str
    chunk_ids: list[str]
    created_at: float
    comment: str | None = None
    wrong: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "answer_id": self.answer_id,
            "rating": self.rating,
            "comment": self.comment,
            "wrong": self.wrong,
            "question": self.question,
            "chunk_ids": self.chunk_ids,
            "created_at": self.created_at,
        }


def parse_rating(value: int | str) -> int:
    """+1 / −1 from `1`, `-1`, `"up"`, `"down"`; anything else is a ValueError."""
    if isinstance(value, int) and not isinstance(value, bool) and value in (1, -1):
        return value
    rating = RATINGS.get(str(value).strip().lower())
    if rating is None:
        raise ValueError(f"a rating is up (+1) or down (-1), not {value!r}")
    return rating


def chunk_votes(answer: AnswerRecord, rating: int, wrong: Iterable[str]) -> dict[str, int]:
    """The vote `answer`'s feedback casts on each chunk it cited (see the module doc)."""
    marked = set(wrong)
    votes: dict[str, int] = {}
    for chunk_id in answer.chunk_ids:
        if chunk_id in marked:
            votes[chunk_id] = -1
        elif rating > 0 or not marked:
            votes[chunk_id] = rating
    return votes


class FeedbackStore(SqliteStore):
    schema = SCHEMA

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def add(
        self,
        answer: AnswerRecord,
        rating: int | str,
        comment: str | None = None,
        wrong: Sequence[str] = (),
        now: float | None = None,
    ) -> Feedback:
        """Store a rating of `answer`; it replaces that answer's earlier votes on its chunks.
        `wrong` names cited sources (chunk ids or urls); naming anything else is a ValueError."""
        value = parse_rating(rating)
        marks = list(dict.fromkeys(wrong))
        unknown = [m for m in marks if m not in answer.citation_keys()]
        if unknown:
            raise ValueError(f"not cited by answer {answer.answer_id}: {', '.join(unknown)}")
        created = time.time() if now is None else now
        chunk_ids = answer.chunk_ids
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO feedback(answer_id, rating, comment, wrong, question, chunk_ids,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    answer.answer_id,
                    value,
                    comment or None,
                    json.dumps(marks, ensure_ascii=False),
                    answer.question,
                    json.dumps(chunk_ids, ensure_ascii=False),
                    created,
                ),
            )
            db.execute("DELETE FROM chunk_votes WHERE answer_id=?", (answer.answer_id,))
            db.executemany(
                "INSERT INTO chunk_votes(answer_id, chunk_id, vote, created_at) VALUES (?,?,?,?)",
                [
                    (answer.answer_id, chunk_id, vote, created)
                    for chunk_id, vote in chunk_votes(answer, value, marks).items()
                ],
            )
        assert cursor.lastrowid is not None
        return Feedback(
            id=cursor.lastrowid,
            answer_id=answer.answer_id,
            rating=value,
            question=answer.question,
            chunk_ids=chunk_ids,
            created_at=created,
            comment=comment or None,
            wrong=marks,
        )

    def history(self, answer_id: str | None = None) -> list[Feedback]:
        """Every feedback submitted (for one answer), oldest first."""
        query = (
            "SELECT id, answer_id, rating, question, chunk_ids, created_at, comment, wrong"
            " FROM feedback"
        )
        args: tuple[str, ...] = ()
        if answer_id is not None:
            query += " WHERE answer_id=?"
            args = (answer_id,)
        with self._lock:
            rows = self.db.execute(query + " ORDER BY id", args).fetchall()
        return [
            Feedback(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], json.loads(r[7]))
            for r in rows
        ]

    def latest_rating(self, answer_id: str) -> int | None:
        with self._lock:
            row = self.db.execute(
                "SELECT rating FROM feedback WHERE answer_id=? ORDER BY id DESC LIMIT 1",
                (answer_id,),
            ).fetchone()
        return row[0] if row else None

    def votes(self, chunk_ids: Iterable[str]) -> dict[str, list[Vote]]:
        """The current votes on each of `chunk_ids` that has any."""
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[str, list[Vote]] = defaultdict(list)
        with self._lock:
            for start in range(0, len(ids), 500):  # stay under SQLite's variable limit
                batch = ids[start : start + 500]
                rows = self.db.execute(
                    "SELECT chunk_id, vote, created_at FROM chunk_votes WHERE chunk_id IN"
                    f" ({','.join('?' * len(batch))})",
                    batch,
                )
                for chunk_id, vote, created in rows:
                    found[chunk_id].append(Vote(vote, created))
        return dict(found)


def submit_feedback(
    data_dir: Path,
    answer_id: str,
    rating: int | str,
    comment: str | None = None,
    wrong: Sequence[str] = (),
    now: float | None = None,
) -> Feedback:
    """Rate a recorded answer (`UnknownAnswerError` when there is none with this id)."""
    with AnswerStore(data_dir) as answers:
        answer = answers.require(answer_id)
    with FeedbackStore(data_dir) as store:
        return store.add(answer, rating, comment, wrong, now)
