"""The stored conversations, newest first (`GET /v1/threads`), and one thread's messages.

Threads are the answer graph's checkpoints in ``<data dir>/threads.sqlite3`` (an
`AsyncSqliteSaver`). The list is ordered by each thread's newest checkpoint id: LangGraph's ids
are UUIDv6, whose text sorts by creation time, so the id of a page's last thread is also the
cursor (`before`) of the next page. A thread with checkpoints but no message (its only turn
failed or was stopped: the question is stored by the turn's last step) is not listed, as
`GET /v1/threads/{id}` answers 404 for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

TITLE_CHARS = 80
ROLES: dict[str, Literal["user", "assistant", "system", "tool"]] = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
}

# Threads by newest checkpoint id; `?1` the cursor (NULL: from the newest).
_NEWEST_FIRST = """
SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints WHERE checkpoint_ns = ''
GROUP BY thread_id HAVING ?1 IS NULL OR last < ?1 ORDER BY last DESC LIMIT ?2
"""


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    id: str | None


@dataclass(frozen=True)
class ThreadSummary:
    thread_id: str
    title: str  # the first question, on one line, cut at TITLE_CHARS
    updated_at: datetime  # of the newest checkpoint (the last turn, finished or not)
    message_count: int
    cursor: str  # the newest checkpoint id: `before` for the threads older than this one


@dataclass(frozen=True)
class ThreadPage:
    threads: list[ThreadSummary]
    next_before: str | None  # pass as `before` for the next page; None: this was the last


def messages_of(values: dict[str, Any]) -> list[Message]:
    """A thread state's conversation as plain messages (roles as the API names them)."""
    return [
        Message(role=ROLES.get(m.type, "assistant"), content=text_of(m.content), id=m.id)
        for m in values.get("messages") or []
    ]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content or []]
    return "".join(parts)


def title_of(messages: list[Message]) -> str:
    first = next((m.content for m in messages if m.role == "user"), "")
    line = " ".join(first.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


async def list_threads(
    checkpointer: Any, graph: Any, *, limit: int, before: str | None = None
) -> ThreadPage:
    """Up to `limit` threads with messages, newest first, older than cursor `before`."""
    await checkpointer.setup()  # no table yet when nothing was ever asked
    found: list[ThreadSummary] = []
    cursor = before
    while len(found) < limit:
        batch = max(limit - len(found), 8)  # a few extra: message-less threads are skipped
        page = await _newest(checkpointer, cursor, batch)
        for thread_id, last in page:
            cursor = last
            summary = await _summary(graph, thread_id, last)
            if summary is not None:
                found.append(summary)
                if len(found) == limit:
                    break
        if len(page) < batch:
            break
    more = len(found) == limit and bool(await _newest(checkpointer, cursor, 1))
    return ThreadPage(found, found[-1].cursor if more else None)


async def _newest(checkpointer: Any, before: str | None, limit: int) -> list[tuple[str, str]]:
    """(thread id, newest checkpoint id) of up to `limit` threads older than `before`."""
    async with checkpointer.lock, checkpointer.conn.execute(_NEWEST_FIRST, (before, limit)) as rows:
        return [(row[0], row[1]) for row in await rows.fetchall()]


async def _summary(graph: Any, thread_id: str, last: str) -> ThreadSummary | None:
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    messages = messages_of(snapshot.values or {})
    if not messages:
        return None
    updated = snapshot.created_at  # ISO 8601 of the checkpoint read
    return ThreadSummary(
        thread_id=thread_id,
        title=title_of(messages),
        updated_at=datetime.fromisoformat(updated),
        message_count=len(messages),
        cursor=last,
    )
