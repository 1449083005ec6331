"""The answer graph: the story of one question, from the chat box to a cited answer.

1. `take_question` — the plain `question`, or the last human message of `messages`; the
   previous turn's documents, answers, notes and usage are cleared.
2. `classify_intent` — on_topic / chitchat / off_topic / unsafe. Chitchat gets a one-line
   reply (`small_talk`); off-topic and unsafe a polite refusal (`decline`) that is not kept in
   the conversation. Both end the turn.
3. `condense` — a running summary of the thread and a standalone question.
4. `plan` — domain terms, 1–4 aspects, vault queries (and web queries in hybrid mode); a
   question in another script than the vault's is also searched translated into the vault's
   language (one bounded call, once per thread: `graph/translation.py`).
5. `retrieve_vault` / `web_search` — one `Send` task per query, fanned in by the `documents`
   reducer.
6. `check_evidence` — in hybrid mode with web "weak", search the web for the aspects whose
   vault evidence is weak (once per turn); note it when no web key is configured.
7. `grade` — one batched call per aspect scores every candidate; the weak ones are dropped.
8. `deduplicate` — near-identical evidence merges by embedding, keeping every source.
9. `answer_aspect` — one `Send` task per aspect, from that aspect's evidence only.
10. `synthesize` — one answer from the aspect answers (nothing to do for one aspect).
11. `finish` — citations, an answer id, the answer recorded for feedback and appended to
    `messages`.

A step that raises ends a chat turn (`messages` input) with an error reply in `messages`
(`reply_with_error`); a plain `question` run fails, for the caller (`run.py`) to report. A
failed parallel (`Send`) task does not fail the run: the turn goes on without that search or
that aspect, with a note, and only when nothing is left does the joining step fail
(`nodes/tasks.py`).

With no model configured (or after the model server failed) the same nodes run their
deterministic versions: on-topic, the question as is, one aspect, the top-scored chunks and an
extractive answer. Model calls per question: at most 4 + 2×A for A aspects, plus one
translation for a question in another script than the vault's.
"""

from __future__ import annotations

from functools import cache

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from vault_rag.graph.config import Configuration
from vault_rag.graph.nodes.answer import answer_aspect, fan_out_answers, synthesize
from vault_rag.graph.nodes.condense import condense
from vault_rag.graph.nodes.dedup import deduplicate
from vault_rag.graph.nodes.failure import reply_with_error
from vault_rag.graph.nodes.finish import finish
from vault_rag.graph.nodes.grade import grade
from vault_rag.graph.nodes.intent import classify_intent, decline, route_by_intent, small_talk
from vault_rag.graph.nodes.plan import plan
from vault_rag.graph.nodes.question import take_question
from vault_rag.graph.nodes.retrieve import (
    check_evidence,
    fan_out_retrieval,
    retrieve_vault,
    route_after_evidence,
    web_search,
)
from vault_rag.graph.state import InputState, OutputState, State

NODES = (
    "take_question",
    "classify_intent",
    "small_talk",
    "decline",
    "condense",
    "plan",
    "retrieve_vault",
    "web_search",
    "check_evidence",
    "grade",
    "deduplicate",
    "answer_aspect",
    "synthesize",
    "finish",
)


def build_graph(checkpointer: Checkpointer = None) -> CompiledStateGraph:
    """Wire the nodes. Pass a checkpointer for conversation memory (see `run.open_checkpointer`)."""
    # `Configuration` as the context schema: Studio shows its fields, defaults and descriptions
    # (the values themselves are read from `configurable`, where the server mirrors them).
    builder = StateGraph(
        State, context_schema=Configuration, input_schema=InputState, output_schema=OutputState
    )
    # A step that raises ends a chat turn with an error reply (see `nodes/failure.py`).
    builder.set_node_defaults(error_handler=reply_with_error)
    builder.add_node(take_question)
    builder.add_node(classify_intent)
    builder.add_node(small_talk)
    builder.add_node(decline)
    builder.add_node(condense)
    builder.add_node(plan)
    builder.add_node(retrieve_vault)
    builder.add_node(web_search)
    builder.add_node(check_evidence)
    builder.add_node(grade)
    builder.add_node(deduplicate)
    builder.add_node(answer_aspect)
    builder.add_node(synthesize)
    builder.add_node(finish)

    builder.add_edge(START, "take_question")
    builder.add_edge("take_question", "classify_intent")
    builder.add_conditional_edges(
        "classify_intent", route_by_intent, ["condense", "small_talk", "decline"]
    )
    builder.add_edge("small_talk", END)
    builder.add_edge("decline", END)
    builder.add_edge("condense", "plan")
    builder.add_conditional_edges("plan", fan_out_retrieval, ["retrieve_vault", "web_search"])
    builder.add_edge("retrieve_vault", "check_evidence")
    builder.add_edge("web_search", "check_evidence")
    builder.add_conditional_edges("check_evidence", route_after_evidence, ["web_search", "grade"])
    builder.add_edge("grade", "deduplicate")
    builder.add_conditional_edges("deduplicate", fan_out_answers, ["answer_aspect"])
    builder.add_edge("answer_aspect", "synthesize")
    builder.add_edge("synthesize", "finish")
    builder.add_edge("finish", END)

    graph = builder.compile(checkpointer=checkpointer)
    graph.name = "VaultRAG"
    return graph


@cache
def compiled_graph() -> CompiledStateGraph:
    """The graph without a checkpointer, compiled once per process and reused by every run
    that brings none (a compiled graph keeps no per-run state: resources and configuration
    travel in each run's config). `langgraph dev` loads `graph/studio.py`, which loads the
    resources first; the server compiles its own with its checkpointer, once, at start-up."""
    return build_graph()
