"""The answer stream's contract: the graph's event models are what the spec documents and what
the server sends; anything else a node emits is an error in the tests, never a silent drop."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from vault_rag.graph.events import (
    EVENT_MODELS,
    DeltaEvent,
    ErrorEvent,
    FinalEvent,
    ProgressEvent,
    UnknownEventWarning,
    checked,
)
from vault_rag.graph.run import AskResult

SPEC = Path(__file__).resolve().parent.parent / "shared-schemas" / "openapi.json"


def test_an_unknown_event_is_refused_loudly() -> None:
    with pytest.warns(UnknownEventWarning, match="mystery"):
        assert checked({"type": "mystery", "text": "x"}) is None
    event = DeltaEvent(text="x")
    assert checked(event) is event


def test_the_suite_turns_unknown_events_into_errors() -> None:
    # pyproject's filterwarnings: what a test run does when a node emits an unknown event.
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownEventWarning)
        with pytest.raises(UnknownEventWarning):
            checked({"type": "mystery"})


def test_every_event_model_is_in_the_spec_under_its_name() -> None:
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    schemas = spec["components"]["schemas"]
    described = spec["paths"]["/v1/ask"]["post"]["responses"]["200"]["description"]
    for model in EVENT_MODELS:
        expected = model.model_json_schema(ref_template="#/components/schemas/{model}")
        expected.pop("$defs", None)
        assert schemas[model.__name__] == expected, model.__name__
        assert model.EVENT in described and f"`{model.__name__}`" in described


def test_wire_bodies_keep_their_field_names() -> None:
    # What the plugin and the tests read; add fields, never rename (no more `kind` → `code`).
    assert ProgressEvent(node="grade", aspect=1, kept=3).data == {
        "node": "grade",
        "aspect": 1,
        "kept": 3,
    }
    assert ProgressEvent(node="answer", reset=True).data == {"node": "answer", "reset": True}
    assert DeltaEvent(text="a").data == {"text": "a"}
    assert ErrorEvent.from_exception(RuntimeError("boom")).data == {
        "code": "runtime_error",
        "message": "boom",
    }
    result = AskResult(
        answer="A",
        citations=[],
        aspects=[],
        intent="on_topic",
        llm_calls=2,
        prompt_tokens=10,
        completion_tokens=5,
        repair_retries=0,
        answer_id="id",
        thread_id=None,
        mode="strict",
    )
    final = result.final_event()
    assert isinstance(final, FinalEvent)
    assert final.data == {
        **result.to_dict(),
        "usage": {"llm_calls": 2, "prompt_tokens": 10, "completion_tokens": 5, "repair_retries": 0},
    }
    assert AskResult.from_final(final) == result
