"""The answer stream's events: what `run.run_question` yields, `vault-rag ask` prints and
`POST /v1/ask` sends as Server-Sent Events, one Pydantic model per event. The OpenAPI spec
documents these very models (`shared-schemas/openapi.json`), so the graph, the server and the
plugin's generated types cannot drift apart: the server writes `event: <EVENT>` and
`data: <the model's JSON>` and renames nothing.

Adding an event: a model here (with its `EVENT` name, listed in `EVENT_MODELS`), emitted where
it happens (a node's `nodes.common.emit(...)`, or `run.py` itself), and the plugin's handling
(`obsidian-plugin/src/client/api.ts`, whose types regenerate from the spec: `npm run gen:types`).
"""

from __future__ import annotations

import re
import warnings
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field


class UnknownEventWarning(RuntimeWarning):
    """A node emitted a custom stream event no model describes. It is not sent; the test
    suite turns this warning into an error (pyproject `filterwarnings`)."""


class StreamEvent(BaseModel):
    """One event of the answer stream. `event` is its SSE name, `data` its JSON body."""

    EVENT: ClassVar[str]

    @property
    def event(self) -> str:
        return self.EVENT

    @property
    def data(self) -> dict[str, Any]:
        # Fields left unset stay off the wire (a progress event has only its own counts).
        return self.model_dump(mode="json", exclude_unset=True)


class ProgressEvent(StreamEvent):
    """`event: progress` — a step of the answer graph finished."""

    EVENT: ClassVar[str] = "progress"
    model_config = ConfigDict(extra="allow")
    node: str
    aspect: int | None = None
    reset: bool | None = Field(None, description="Drop the streamed text: a fallback follows")


class DeltaEvent(StreamEvent):
    """`event: delta` — more answer text."""

    EVENT: ClassVar[str] = "delta"
    text: str


class CitationsEvent(StreamEvent):
    """`event: citations` — once, after the answer."""

    EVENT: ClassVar[str] = "citations"
    citations: list[dict[str, Any]]


class Usage(BaseModel):
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    repair_retries: int


class FocusInfo(BaseModel):
    """`final.focus`: the note the question was asked about, and what the answer took from it."""

    path: str = Field(description="The note, vault-relative")
    indexed: bool = Field(description="The index has it; when false nothing could prefer it")
    linked: int = Field(description="Its linked notes (both directions) preferred too")
    selection: bool = Field(description="The selection was searched as one more query")
    cited: int = Field(description="Citations from the note itself")
    cited_linked: int = Field(description="Citations from its linked notes")


class FinalEvent(StreamEvent):
    """`event: final` — the whole result, last (`vault-rag ask --json` prints the same)."""

    EVENT: ClassVar[str] = "final"
    model_config = ConfigDict(extra="allow")
    answer: str
    answer_id: str
    citations: list[dict[str, Any]]
    usage: Usage
    thread_id: str | None
    notes: list[str]
    aspects: list[dict[str, Any]] = Field(default_factory=list)
    intent: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    repair_retries: int = 0
    mode: str = "strict"
    nodes: list[str] = Field(default_factory=list, description="The steps that ran, in order")
    focus: FocusInfo | None = Field(
        None, description="Asked about a note (`AskRequest.note`): that note and its use"
    )


class ErrorEvent(StreamEvent):
    """`event: error` — the run failed; nothing follows."""

    EVENT: ClassVar[str] = "error"
    code: str = Field(description="What failed, snake_case (e.g. `runtime_error`, `internal`)")
    message: str

    @classmethod
    def from_exception(cls, exc: BaseException) -> ErrorEvent:
        name = type(exc).__name__
        return cls(code=re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower(), message=str(exc) or name)


EVENT_MODELS: tuple[type[StreamEvent], ...] = (
    ProgressEvent,
    DeltaEvent,
    CitationsEvent,
    FinalEvent,
    ErrorEvent,
)


def checked(chunk: object) -> StreamEvent | None:
    """A node's custom stream chunk (`nodes.common.emit`) as an event; None, with an
    `UnknownEventWarning`, for anything that is not one of the event models."""
    if isinstance(chunk, EVENT_MODELS):
        return chunk
    warnings.warn(f"unknown answer stream event {chunk!r:.200}", UnknownEventWarning, stacklevel=2)
    return None
