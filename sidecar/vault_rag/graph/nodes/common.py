"""Small helpers every node uses: progress events, the usable model, failure notes."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer

from vault_rag.graph.config import Resources
from vault_rag.graph.events import ProgressEvent, StreamEvent
from vault_rag.graph.llm import ChatProvider, LLMUnavailable, StructuredOutputError


def emit(event: StreamEvent) -> None:
    """Send a stream event (progress, answer delta) to whoever streams the run; a no-op when
    the node runs outside a streaming graph (unit tests call nodes directly)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    writer(event)


def progress(node: str, **data: Any) -> None:
    emit(ProgressEvent(node=node, **data))


def usable_model(resources: Resources, degraded: str) -> ChatProvider | None:
    """The chat model, unless none is configured or it already failed during this turn."""
    return None if degraded else resources.llm


def failure_update(node: str, exc: Exception, resources: Resources) -> dict[str, Any]:
    """State update after a model call failed: a note, and for a server that cannot be
    reached, `degraded` so the rest of the turn does not wait on it again."""
    who = resources.llm.label if resources.llm else "the model"
    if isinstance(exc, LLMUnavailable):
        return {
            "usage": exc.usage,
            "degraded": str(exc),
            "notes": [
                f"The language model ({who}) failed during {node}: {exc}. The rest of this "
                "answer was made without it."
            ],
        }
    if isinstance(exc, StructuredOutputError):
        return {
            "usage": exc.usage,
            "notes": [f"The model's {node} reply was unusable ({exc}); used a simple fallback."],
        }
    raise exc
