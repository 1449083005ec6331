"""`POST /v1/ask`: run the answer graph and stream its events as Server-Sent Events.

Events, in order: `progress` (a node finished: `node`, `aspect`, counts), `delta` (answer
text), `citations` (once), `final` (the whole result: `answer`, `answer_id`, `citations`,
`usage`, ...); or `error` (`code`, `message`) and nothing after it. A client that disconnects
cancels the run (see `api/sse.py`). Runs on different threads are independent: two streams
can run at once. Turns on one thread are queued (`graph/turns.py`): a question asked while
another is being answered on the same thread first gets `progress` `{"node": "queued"}`, then
runs once the other has finished, so neither turn is lost.

Asking about a note (`note`: its path, the selection, its links): the stream's second
`progress` is `{"node": "focus", "note": path, "indexed", "linked", "selection"}`, retrieval
prefers that note (`graph/focus.py`), and `final.focus` counts the citations taken from it.

`model` picks another chat model of the server in use for this question only (the pane's
per-conversation picker); the settings in use are unchanged.

A switch of embedding model waits for the answers already streaming (`api/embedding_swap.py`);
one still running when its drain times out ends with `error` `{"code": "switched"}` (ask again:
the new index answers).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
from fastapi import APIRouter

from vault_rag.api.deps import (
    LeaseDep,
    ServerState,
    State,
    note_path,
    served_note_path,
    translated,
)
from vault_rag.api.schemas import AskRequest
from vault_rag.api.sse import EventStreamResponse
from vault_rag.graph.events import EVENT_MODELS, ErrorEvent, FinalEvent, ProgressEvent
from vault_rag.services.model_choice import resources_for_model
from vault_rag.services.search import searched

router = APIRouter(tags=["ask"])

__all__ = ["EVENT_MODELS", "router"]  # app.py documents the event models
STREAM_DOC = {
    200: {
        "description": "`text/event-stream`: `event: "
        + "|".join(m.EVENT for m in EVENT_MODELS)
        + "` lines, each with one `data:` line of JSON shaped as the schema of the same name ("
        + ", ".join(f"`{m.__name__}`" for m in EVENT_MODELS)
        + ").",
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "string",
                    "description": "Server-Sent Events; see the event schemas",
                }
            }
        },
    }
}


@router.post(
    "/ask",
    response_class=EventStreamResponse,
    status_code=200,
    responses=STREAM_DOC,  # type: ignore[arg-type]
    summary="Answer a question from the vault, streaming (SSE)",
)
async def ask(body: AskRequest, state: State, lease: LeaseDep) -> EventStreamResponse:
    thread_id = body.thread_id or uuid.uuid4().hex
    note = None
    if body.note is not None:  # paths outside the vault are a 400 before anything streams
        # An excluded note is a 403 before anything runs or is stored (its selection too);
        # links into excluded folders are dropped (they are not indexed either).
        links = (note_path(link) for link in body.note.links)
        note = {
            "path": served_note_path(body.note.path, state),
            "selection": body.note.selection or "",
            "links": [link for link in links if not state.exclusions.covers(link)],
        }
    if body.collections:  # an unknown name is a 400 before anything streams
        with translated():
            searched(state, body.collections)
    # A switch of embedding model that stops waiting for this answer (its drain timed out)
    # ends the stream with an error event before it closes the index under the run.
    stop, loop = anyio.Event(), asyncio.get_running_loop()
    lease.on_abort(lambda: loop.call_soon_threadsafe(stop.set))
    switched = ErrorEvent(
        code="switched",
        message="the embedding model was switched before this answer finished; ask again",
    )
    return EventStreamResponse(
        _events(state, body, thread_id, note),
        stop=stop,
        stopped=(switched.event, switched.data),
    )


async def _events(
    state: ServerState, body: AskRequest, thread_id: str, note: dict[str, Any] | None
) -> AsyncIterator[tuple[str, Any]]:
    from vault_rag.graph.run import run_question

    # A model picked for this question (the pane's picker) only changes the chat model.
    resources = resources_for_model(state.resources, body.model)
    configuration = resources.defaults
    if body.mode is not None:
        configuration = replace(configuration, web_mode=body.mode)
    if body.collections:
        configuration = replace(configuration, collections=list(body.collections))
    state.asks.running += 1
    outcome = "cancelled"  # unless the run ends on its own
    try:
        if state.turns.busy(thread_id):
            queued = ProgressEvent(node="queued", thread_id=thread_id)
            yield queued.event, queued.data
        async with state.turns.turn(thread_id):
            async for event in run_question(
                body.question,
                resources,
                configuration=configuration,
                checkpointer=state.checkpointer,
                thread_id=thread_id,
                graph=state.graph,  # compiled once at start-up, with this checkpointer
                note=note,
            ):
                # The graph's event models are the wire contract: sent as they are.
                yield event.event, event.data
                if isinstance(event, ErrorEvent):
                    outcome = "failed"
                    return
                if isinstance(event, FinalEvent):
                    outcome = "completed"
    except Exception as exc:  # run_question reports its own errors; this is a last resort
        outcome = "failed"
        error = ErrorEvent(code="internal", message=f"{type(exc).__name__}: {exc}")
        yield error.event, error.data
    finally:
        state.asks.running -= 1
        setattr(state.asks, outcome, getattr(state.asks, outcome) + 1)
