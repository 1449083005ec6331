"""Counting what a question costs: model calls, tokens and structured-output repairs.

Every node that calls the model returns a `Usage` in its state update; the state's reducer
sums them (parallel `Send` tasks included) and the first node of a turn resets it (it writes
zero usage, which the reducer takes as "start over"; see `state.py`), so the totals are per
answer. Repair re-asks are counted apart
from `llm_calls`, so the budget of 4 + 2×A calls per question stays checkable while retries
stay visible.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict  # pydantic on Python 3.11 needs this one


class Usage(TypedDict):
    llm_calls: int  # first attempts only
    repair_retries: int  # re-asks after an unparsable reply, and method switches
    prompt_tokens: int
    completion_tokens: int
    estimated_calls: int  # calls whose tokens were estimated: the server reported no usage


def zero_usage() -> Usage:
    return Usage(
        llm_calls=0, repair_retries=0, prompt_tokens=0, completion_tokens=0, estimated_calls=0
    )


def sum_usage(left: Usage | None, right: Usage | None) -> Usage:
    """The two usages added up."""
    total = zero_usage()
    for part in (left, right):
        for key in total:
            total[key] += int((part or {}).get(key, 0))  # type: ignore[literal-required]
    return total


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    """State reducer: the sum; a zero usage (`take_question`'s write) starts over."""
    if right is not None and not any(right.values()):
        return zero_usage()
    return sum_usage(left, right)


def usage_of_message(message: Any) -> tuple[int, int]:
    """(prompt, completion) tokens a chat model reported for one reply; 0 when it did not."""
    meta = getattr(message, "usage_metadata", None) or {}
    return int(meta.get("input_tokens") or 0), int(meta.get("output_tokens") or 0)
