"""Running a question: the streaming entry point for the CLI and the HTTP server.

`run_question` is an async generator of the event models of `graph/events.py`, sent as they
are as SSE events by `POST /v1/ask` (`.event` the name, `.data` the JSON):

* ``progress`` — ``{"node": ..., ...counts}`` as each step finishes (``aspect`` for per-aspect
  steps); ``{"node": "answer", "reset": true}`` tells the client to drop streamed text (the
  model failed mid-answer and the extractive fallback follows);
* ``delta`` — ``{"text": ...}``, the answer as it is written;
* ``citations`` — ``{"citations": [...]}``, once, after the answer;
* ``final`` — the whole result (`AskResult.to_dict()` plus ``usage``), last;
* ``error`` — ``{"code": ..., "message": ...}``; nothing follows it.

Cancelling the task that iterates the generator cancels the graph run (LangGraph cancels its
running tasks). A failed or cancelled turn leaves the thread's conversation untouched: the
question and answer are appended to `messages` only by the last node, and the first node of
the next turn clears whatever per-turn state was left.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from vault_rag.graph.config import Configuration, Resources
from vault_rag.graph.events import (
    CitationsEvent,
    DeltaEvent,
    ErrorEvent,
    FinalEvent,
    ProgressEvent,
    StreamEvent,
    Usage,
    checked,
)
from vault_rag.graph.focus import focus_info
from vault_rag.graph.graph import build_graph, compiled_graph
from vault_rag.graph.safe_markdown import StreamNeutralizer, neutralize
from vault_rag.graph.usage import zero_usage

THREADS_FILE = "threads.sqlite3"

# What `run_question` yields: one of the event models (`graph/events.py`); `.event` is its SSE
# name and `.data` its JSON body.
AskEvent = StreamEvent


@dataclass
class AskResult:
    """What one answer reports (the JSON of `vault-rag ask --json`)."""

    answer: str
    citations: list[dict[str, Any]]
    aspects: list[dict[str, Any]]
    intent: str | None
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    repair_retries: int
    answer_id: str
    thread_id: str | None
    mode: str
    notes: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)  # the steps that ran, in order
    focus: dict[str, Any] | None = None  # asked about a note: which, and what came from it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def final_event(self) -> FinalEvent:
        """The `final` event: this result plus the model usage grouped under `usage`."""
        usage = Usage(
            llm_calls=self.llm_calls,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            repair_retries=self.repair_retries,
        )
        return FinalEvent(**self.to_dict(), usage=usage)

    @classmethod
    def from_final(cls, event: FinalEvent) -> AskResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in event.data.items() if k in names})


@asynccontextmanager
async def open_checkpointer(data_dir: Path) -> AsyncIterator[Any]:
    """Conversation memory: an `AsyncSqliteSaver` on ``<data dir>/threads.sqlite3``."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    data_dir.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(data_dir / THREADS_FILE)) as saver:
        yield saver


def run_config(
    resources: Resources, configuration: Configuration, thread_id: str | None
) -> RunnableConfig:
    configurable: dict[str, Any] = {"resources": resources, **configuration.as_configurable()}
    if thread_id is not None:
        configurable["thread_id"] = thread_id
    return {"configurable": configurable, "recursion_limit": 50}


async def run_question(
    question: str,
    resources: Resources,
    *,
    configuration: Configuration | None = None,
    checkpointer: Any = None,
    thread_id: str | None = None,
    graph: CompiledStateGraph | None = None,
    note: Mapping[str, Any] | None = None,
) -> AsyncIterator[AskEvent]:
    """Answer `question`, yielding events as the graph runs (see the module doc).

    `note` asks about one note: `{"path": vault-relative, "selection": text, "links": [paths]}`
    (`graph/focus.py`); retrieval then prefers it and `final.focus` says what came from it.

    With a `checkpointer` the turn joins thread `thread_id` (a new random id when None); without
    one every question stands alone. Build `resources` once and reuse them across questions;
    a long-lived caller may also pass the compiled `graph` (`build_graph(checkpointer)`).
    """
    configuration = configuration or resources.defaults
    if checkpointer is not None and thread_id is None:
        thread_id = uuid.uuid4().hex
    if graph is None:  # with a checkpointer: a graph of its own; without: the process's one
        graph = build_graph(checkpointer) if checkpointer is not None else compiled_graph()
    config = run_config(resources, configuration, thread_id if checkpointer is not None else None)
    final: dict[str, Any] = {}
    nodes: list[str] = []
    safe = StreamNeutralizer()  # remote images become links before any text leaves the graph
    try:
        inputs = {"question": question, "note": dict(note) if note else None}
        async for mode, chunk in graph.astream(inputs, config, stream_mode=["custom", "values"]):
            if mode == "values":
                final = chunk
                continue
            event = checked(chunk)
            if event is None:
                continue  # not sent; `UnknownEventWarning` says so (an error in the tests)
            if isinstance(event, DeltaEvent):
                if text := safe.feed(event.text):
                    yield DeltaEvent(text=text)
                continue
            if isinstance(event, ProgressEvent) and event.reset:
                safe.reset()
            elif isinstance(event, ProgressEvent) and event.node not in nodes:
                nodes.append(event.node)
            yield event
    except Exception as exc:  # a bug or an index problem: report it, keep the thread usable
        yield ErrorEvent.from_exception(exc)
        return
    if rest := safe.flush():
        yield DeltaEvent(text=rest)
    usage = final.get("usage") or zero_usage()
    notes = list(final.get("notes", []))
    if usage.get("estimated_calls"):
        notes.append(
            f"Token counts of {usage['estimated_calls']} streamed call(s) are estimates: the "
            "model server reports no usage while streaming."
        )
    result = AskResult(
        answer=neutralize(final.get("answer", "")),
        citations=list(final.get("citations", [])),
        aspects=[_safe_aspect(a) for a in final.get("aspects", [])],
        intent=final.get("intent"),
        llm_calls=usage["llm_calls"],
        prompt_tokens=usage["prompt_tokens"],
        completion_tokens=usage["completion_tokens"],
        repair_retries=usage["repair_retries"],
        answer_id=final.get("answer_id", ""),
        thread_id=thread_id if checkpointer is not None else None,
        mode=configuration.web_mode,
        notes=notes,
        nodes=nodes,
        focus=focus_info(final.get("focus"), list(final.get("citations", []))),
    )
    # The answer was recorded for feedback by the graph's last node (`nodes/finish.py`).
    yield CitationsEvent(citations=result.citations)
    yield result.final_event()


def _safe_aspect(aspect: Any) -> dict[str, Any]:
    out = dict(aspect)
    if isinstance(out.get("answer"), str):
        out["answer"] = neutralize(out["answer"])
    return out


async def ask(question: str, resources: Resources, **options: Any) -> AskResult:
    """`run_question` without streaming: the final result, or `RuntimeError` on an error event."""
    async for event in run_question(question, resources, **options):
        if isinstance(event, ErrorEvent):
            raise RuntimeError(event.message)
        if isinstance(event, FinalEvent):
            return AskResult.from_final(event)
    raise RuntimeError("the answer graph ended without a result")
