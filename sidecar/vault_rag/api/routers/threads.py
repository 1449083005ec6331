"""`GET /v1/threads` (the stored conversations, newest first) and `GET /v1/threads/{thread_id}`
(one of them), read from the answer graph's checkpoints (`graph/history.py`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Path as PathParam

from vault_rag.api.deps import State
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import Thread, ThreadList, ThreadListItem, ThreadMessage
from vault_rag.feedback.answers import AnswerStore
from vault_rag.graph.history import list_threads, messages_of

router = APIRouter(prefix="/threads", tags=["threads"])


@router.get("", response_model=ThreadList, summary="The stored conversations, newest first")
async def get_threads(
    state: State,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    before: Annotated[
        str | None,
        Query(
            pattern=r"^[0-9A-Za-z-]{1,64}$",
            description="The `next_before` of the previous page: only threads older than it",
        ),
    ] = None,
) -> ThreadList:
    """Each conversation with its title (the first question), when it last changed and how
    many messages it holds. A thread whose only turn failed or was stopped is not listed."""
    page = await list_threads(state.checkpointer, state.graph, limit=limit, before=before)
    items = [
        ThreadListItem(
            thread_id=t.thread_id,
            title=t.title,
            updated_at=t.updated_at,
            message_count=t.message_count,
        )
        for t in page.threads
    ]
    return ThreadList(threads=items, next_before=page.next_before)


@router.get("/{thread_id}", response_model=Thread, summary="A stored conversation")
async def get_thread(
    thread_id: Annotated[str, PathParam(pattern=r"^[A-Za-z0-9_-]{1,128}$")], state: State
) -> Thread:
    snapshot = await state.graph.aget_state({"configurable": {"thread_id": thread_id}})
    values = snapshot.values or {}
    messages = messages_of(values)
    if not messages:
        raise ApiError(404, "not_found", f"no conversation with id {thread_id!r}")
    answers = [m.id for m in messages if m.role == "assistant" and m.id]
    cited = await asyncio.to_thread(_citations_of, state.index.data_dir, answers)
    return Thread(
        thread_id=thread_id,
        messages=[
            ThreadMessage(
                role=m.role, content=m.content, id=m.id, citations=cited.get(m.id or "", [])
            )
            for m in messages
        ],
        summary=values.get("summary", ""),
    )


def _citations_of(data_dir: Path, answer_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each answer's citations as recorded when it was given (`feedback/answers.py`), so a
    conversation read back shows its sources and can still be rated and saved."""
    if not answer_ids:
        return {}
    with AnswerStore(data_dir) as store:
        found = {i: store.get(i) for i in answer_ids}
    return {i: record.citations for i, record in found.items() if record is not None}
