"""A web source's crawl state, in SQLite in the source's data folder (`crawl.sqlite3`): each
kept page (its URL, file in the mirror, title, heading anchors, ETag / Last-Modified, content
hash, when it was last fetched), the current run's queue, and the problems of the last run
(`vault-rag status`). Every page is committed as it is written, so a crawl killed midway
resumes from its queue (`begin` keeps an unfinished run's queue)."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "crawl.sqlite3"
MIRROR_DIR = "pages"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY,
    rel TEXT UNIQUE NOT NULL,
    content_type TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    anchors TEXT NOT NULL DEFAULT '{}',
    etag TEXT,
    last_modified TEXT,
    content_hash TEXT NOT NULL DEFAULT '',
    fetched_at REAL NOT NULL,
    changed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS queue (
    url TEXT PRIMARY KEY,
    depth INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS problems (
    url TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass
class Page:
    url: str
    rel: str
    content_type: str = ""
    title: str = ""
    anchors: dict[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str = ""
    fetched_at: float = 0.0
    changed_at: float = 0.0


class CrawlState:
    def __init__(self, file: Path, *, read_only: bool = False) -> None:
        self.file = file
        if read_only:
            self.db = sqlite3.connect(f"file:{file}?mode=ro", uri=True, check_same_thread=False)
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(file, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(_SCHEMA)
            self.db.commit()

    def close(self) -> None:
        self.db.close()

    # --- pages -----------------------------------------------------------------------------
    def page(self, url: str) -> Page | None:
        row = self.db.execute("SELECT * FROM pages WHERE url = ?", (url,)).fetchone()
        return _page(row) if row else None

    def page_at(self, rel: str) -> Page | None:
        row = self.db.execute("SELECT * FROM pages WHERE rel = ?", (rel,)).fetchone()
        return _page(row) if row else None

    def pages(self) -> list[Page]:
        return [_page(r) for r in self.db.execute("SELECT * FROM pages ORDER BY url")]

    def hash_owner(self, content_hash: str) -> str | None:
        row = self.db.execute(
            "SELECT url FROM pages WHERE content_hash = ? LIMIT 1", (content_hash,)
        ).fetchone()
        return row[0] if row else None

    def rel_owner(self, rel: str) -> str | None:
        row = self.db.execute("SELECT url FROM pages WHERE rel = ?", (rel,)).fetchone()
        return row[0] if row else None

    def put_page(self, page: Page) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                page.url,
                page.rel,
                page.content_type,
                page.title,
                json.dumps(page.anchors, ensure_ascii=False),
                page.etag,
                page.last_modified,
                page.content_hash,
                page.fetched_at,
                page.changed_at,
            ),
        )
        self.db.execute("DELETE FROM problems WHERE url = ?", (page.url,))
        self.db.commit()

    def touch(self, url: str) -> None:
        """A 304: the page is unchanged and was just checked."""
        self.db.execute("UPDATE pages SET fetched_at = ? WHERE url = ?", (time.time(), url))
        self.db.execute("DELETE FROM problems WHERE url = ?", (url,))
        self.db.commit()

    def drop_page(self, url: str) -> None:
        self.db.execute("DELETE FROM pages WHERE url = ?", (url,))
        self.db.commit()

    # --- the run's queue -------------------------------------------------------------------
    def begin(self, seeds: list[str]) -> bool:
        """Start a run with `seeds` queued, or resume an unfinished one (True)."""
        if self.get_meta("run_started") and not self.get_meta("run_finished"):
            for url in seeds:
                self.enqueue(url, 0, commit=False)
            self.db.commit()
            return True
        self.db.execute("DELETE FROM queue")
        self.db.execute("DELETE FROM problems")
        self.set_meta("run_started", str(time.time()), commit=False)
        self.db.execute("DELETE FROM meta WHERE key = 'run_finished'")
        for url in seeds:
            self.enqueue(url, 0, commit=False)
        self.db.commit()
        return False

    def finish(self) -> None:
        self.set_meta("run_finished", str(time.time()))

    def enqueue(self, url: str, depth: int, *, commit: bool = True) -> None:
        seq = self.db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM queue").fetchone()[0]
        self.db.execute(
            "INSERT OR IGNORE INTO queue (url, depth, seq) VALUES (?, ?, ?)", (url, depth, seq)
        )
        if commit:
            self.db.commit()

    def next_queued(self) -> tuple[str, int] | None:
        row = self.db.execute(
            "SELECT url, depth FROM queue WHERE done = 0 ORDER BY depth, seq LIMIT 1"
        ).fetchone()
        return (row[0], row[1]) if row else None

    def mark_done(self, url: str) -> None:
        self.db.execute("UPDATE queue SET done = 1 WHERE url = ?", (url,))
        self.db.commit()

    def queued_count(self, *, done: bool | None = None) -> int:
        if done is None:
            return self.db.execute("SELECT COUNT(*) FROM queue").fetchone()[0]
        return self.db.execute(
            "SELECT COUNT(*) FROM queue WHERE done = ?", (1 if done else 0,)
        ).fetchone()[0]

    # --- problems and meta -----------------------------------------------------------------
    def problem(self, url: str, code: str, message: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO problems VALUES (?, ?, ?, ?)", (url, code, message, time.time())
        )
        self.db.commit()

    def problems(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT url, code, message, at FROM problems ORDER BY url")
        return [{"url": u, "code": c, "message": m, "at": a} for u, c, m, a in rows]

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str, *, commit: bool = True) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        if commit:
            self.db.commit()


def _page(row: tuple[Any, ...]) -> Page:
    return Page(
        url=row[0],
        rel=row[1],
        content_type=row[2],
        title=row[3],
        anchors=json.loads(row[4] or "{}"),
        etag=row[5],
        last_modified=row[6],
        content_hash=row[7],
        fetched_at=row[8],
        changed_at=row[9],
    )


def web_status(folder: Path) -> dict[str, Any] | None:
    """What `vault-rag status` shows of a web source's crawl: pages kept, when the newest and
    oldest were last fetched, whether the last run finished, its problems. None before the
    first crawl."""
    file = folder / STATE_FILE
    if not file.is_file():
        return None
    state = CrawlState(file, read_only=True)
    try:
        pages = state.pages()
        fetched = [p.fetched_at for p in pages]
        started = state.get_meta("run_started")
        finished = state.get_meta("run_finished")
        return {
            "pages": len(pages),
            "last_fetched": max(fetched) if fetched else None,
            "oldest_fetched": min(fetched) if fetched else None,
            "last_run_started": float(started) if started else None,
            "last_run_finished": float(finished) if finished else None,
            "unreachable": state.get_meta("unreachable"),
            "problems": state.problems(),
        }
    except sqlite3.Error:
        return None
    finally:
        state.close()
