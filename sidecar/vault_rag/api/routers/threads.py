"""`GET /v1/threads/{thread_id}`: a stored conversation (the answer graph's checkpoints)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from vault_rag.api.deps import State
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import Thread, ThreadMessage

router = APIRouter(prefix="/threads", tags=["threads"])

ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


@router.get("/{thread_id}", response_model=Thread, summary="A stored conversation")
async def get_thread(
    thread_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,128}$")], state: State
) -> Thread:
    snapshot = await state.graph.aget_state({"configurable": {"thread_id": thread_id}})
    values: dict[str, Any] = snapshot.values or {}
    if not values.get("messages"):
        raise ApiError(404, "not_found", f"no conversation with id {thread_id!r}")
    messages = [
        ThreadMessage(role=ROLES.get(m.type, "assistant"), content=_text(m.content), id=m.id)  # type: ignore[arg-type]
        for m in values["messages"]
    ]
    return Thread(thread_id=thread_id, messages=messages, summary=values.get("summary", ""))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content or []]
    return "".join(parts)
