"""When a parallel task fails: the turn goes on without it.

Retrieval and the aspect answers fan out as `Send` tasks. LangGraph's error handler for a
`Send` task gets the task's payload, not the state, so it cannot end a chat turn with a reply;
a task that raised would fail the whole run and leave the question in `messages` unanswered.
So each task catches its own failure and records it (`failures`); the step that joins the
tasks decides what is left:

* after retrieval (`check_evidence`): an aspect whose every vault search failed, and that
  found nothing, is dropped with a note; some searches of an aspect failing is only a note.
  When no aspect is left, `TurnFailed` — a regular step's error, which ends a chat turn with
  an error reply (`failure.reply_with_error`) and reaches `run.py` callers as an error event.
* after the answers (`synthesize`): the aspects whose answer failed are left out, with a note;
  when every one failed, `TurnFailed`.

A failed web search is never fatal: the web only adds evidence.
"""

from __future__ import annotations

import logging
from typing import Any

from vault_rag.graph.nodes.common import progress
from vault_rag.graph.state import Aspect, AspectAnswer, Doc, TaskFailure

log = logging.getLogger(__name__)


class TurnFailed(RuntimeError):
    """Every parallel task a step needed failed: nothing is left to answer from."""


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def task_failed(node: str, exc: Exception, aspect: int, query: str = "") -> dict[str, Any]:
    """The state update of a `Send` task that raised: its failure, nothing else."""
    log.warning("%s failed (aspect %d, query %r): %s", node, aspect, query, describe(exc))
    log.debug("%s failed", node, exc_info=exc)
    progress(
        node, aspect=aspect, failed=True, error=describe(exc), **({"query": query} if query else {})
    )
    return {"failures": [TaskFailure(node=node, aspect=aspect, query=query, error=describe(exc))]}


def _quoted(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= limit else text[: limit - 1] + '…'}”"


def after_retrieval(
    aspects: list[Aspect], documents: list[Doc], failures: list[TaskFailure]
) -> tuple[list[Aspect], list[str]]:
    """The aspects still worth answering after failed vault searches, and the notes saying
    what failed. Raises `TurnFailed` when none is left."""
    failed = [f for f in failures if f["node"] == "retrieve_vault"]
    notes = [
        f"The web search {_quoted(f['query'])} failed ({f['error']}); the answer does without it."
        for f in failures
        if f["node"] == "web_search"
    ]
    if not failed:
        return aspects, notes
    found = {
        a for d in documents if d.get("kind", "vault") == "vault" for a in d.get("aspects", [])
    }
    kept: list[Aspect] = []
    for aspect in aspects:
        mine = [f for f in failed if f["aspect"] == aspect["index"]]
        if not mine:
            kept.append(aspect)
            continue
        searched = max(len(aspect["vault_queries"]), len(mine))  # (+1: a selection query)
        if len(mine) >= searched and aspect["index"] not in found:
            notes.append(
                f"Searching your notes failed for {_quoted(aspect['question'])} "
                f"({mine[0]['error']}); that part of the question is left out."
            )
            continue
        notes.append(
            f"{len(mine)} of {searched} searches of your notes failed ({mine[0]['error']}); "
            "the answer uses the others."
        )
        kept.append(aspect)
    if not kept:
        raise TurnFailed(f"every search of your notes failed ({failed[0]['error']})")
    return kept, notes


def after_answers(
    answers: list[AspectAnswer], aspects: list[Aspect], failures: list[TaskFailure]
) -> list[str]:
    """Notes for the aspects whose answer failed. Raises `TurnFailed` when every one did."""
    failed = [f for f in failures if f["node"] == "answer_aspect"]
    if not failed:
        return []
    if not answers:
        raise TurnFailed(f"writing the answer failed ({failed[0]['error']})")
    questions = {a["index"]: a["question"] for a in aspects}
    return [
        f"The answer to {_quoted(questions.get(f['aspect'], '?'))} failed ({f['error']}); "
        "this answer covers the rest of the question."
        for f in failed
    ]
