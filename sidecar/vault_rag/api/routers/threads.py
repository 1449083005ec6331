"""`GET /v1/threads` (the stored conversations, newest first) and `GET /v1/threads/{thread_id}`
(one of them), read from the answer graph's checkpoints (`graph/history.py`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from vault_rag.api.deps import State
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import Thread, ThreadList, ThreadListItem, ThreadMessage
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
    thread_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,128}$")], state: State
) -> Thread:
    snapshot = await state.graph.aget_state({"configurable": {"thread_id": thread_id}})
    values = snapshot.values or {}
    messages = messages_of(values)
    if not messages:
        raise ApiError(404, "not_found", f"no conversation with id {thread_id!r}")
    return Thread(
        thread_id=thread_id,
        messages=[ThreadMessage(role=m.role, content=m.content, id=m.id) for m in messages],
        summary=values.get("summary", ""),
    )
