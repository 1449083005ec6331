"""Shared pieces of the answer-graph tests (no tests here).

* `shared_index()` — the bundled sample vault indexed once per test process with the real
  local model and real Chroma; every graph test module reads it (no test writes to it).
* `ScriptedModel` — a chat "model" for `FakeOpenAIServer`: it recognises which node is calling
  from the system prompt and answers in that node's format, as JSON content (JSON-schema and
  JSON mode) or as a tool call (function calling). Recognising the caller, rather than popping
  a FIFO queue, keeps the script right when `Send` tasks run concurrently.
* `collect()` — run a question and gather its events.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_rag.graph.config import Configuration, Resources
from vault_rag.graph.llm import ChatProvider
from vault_rag.graph.prompts.answer import ANSWER_SYSTEM, SYNTHESIZE_SYSTEM
from vault_rag.graph.prompts.condense import CONDENSE_SYSTEM
from vault_rag.graph.prompts.grade import GRADE_SYSTEM
from vault_rag.graph.prompts.intent import INTENT_SYSTEM
from vault_rag.graph.prompts.plan import PLAN_SYSTEM
from vault_rag.graph.run import AskEvent, run_question
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.serving.sample import sample_vault_path

from fakes.openai_server import ChatReply, ErrorReply, ToolCall
from index_helpers import CountingProvider

_SHARED: dict[str, Any] = {}


def shared_provider() -> CountingProvider:
    """The real local model, loaded once; vectors memoised by text across tests."""
    if "provider" not in _SHARED:
        from vault_rag.embeddings.local import LocalE5Provider

        _SHARED["provider"] = CountingProvider(LocalE5Provider())
    return _SHARED["provider"]


def shared_index() -> VaultIndex:
    """The sample vault's index, built once per process (the slow part of these tests)."""
    if "index" not in _SHARED:
        data_dir = Path(tempfile.mkdtemp(prefix="vault-rag-graph-"))
        atexit.register(shutil.rmtree, data_dir, True)
        seed = os.environ.get("VAULT_RAG_TEST_SEED_INDEX")
        if seed:  # developer shortcut: start from a copy of an index built earlier
            shutil.copytree(seed, data_dir, dirs_exist_ok=True)
        index = VaultIndex(sample_vault_path(), data_dir, shared_provider())
        Indexer(index).run()
        _SHARED["index"] = index
    return _SHARED["index"]


def _first_line(template: str) -> str:
    return template.split("{", 1)[0].strip()[:30]


NODE_PROMPTS = {
    "intent": _first_line(INTENT_SYSTEM),
    "condense": _first_line(CONDENSE_SYSTEM),
    "plan": _first_line(PLAN_SYSTEM),
    "grade": _first_line(GRADE_SYSTEM),
    "answer": _first_line(ANSWER_SYSTEM),
    "synthesize": _first_line(SYNTHESIZE_SYSTEM),
}

_CITE_RE = re.compile(r"^\[(\d+)\] cite as: (\S+)", re.MULTILINE)


def node_of(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    for node, start in NODE_PROMPTS.items():
        if system.startswith(start):
            return node
    return "unknown"


@dataclass
class ScriptedModel:
    """Answers like a well-behaved model would, per node. Override any reply with `overrides`
    (node -> reply object, or a callable ``(body) -> ChatReply | ErrorReply``)."""

    intent: str = "on_topic"
    aspects: list[str] | None = None  # plan: aspect questions (default: the question itself)
    score: float = 0.9  # grade: the score given to every passage
    overrides: dict[str, Any] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    reject_json_schema: bool = False  # answer HTTP 500 to response_format json_schema

    def count(self, node: str) -> int:
        return Counter(self.calls)[node]

    def __call__(self, body: dict[str, Any]) -> ChatReply | ErrorReply:
        node = node_of(body)
        self.calls.append(node)
        response_format = (body.get("response_format") or {}).get("type")
        if self.reject_json_schema and response_format == "json_schema":
            return ErrorReply(500, "response_format json_schema is not supported")
        override = self.overrides.get(node)
        if callable(override):
            return override(body)
        if override is not None:
            return override
        user = next(
            (m.get("content") or "" for m in reversed(body["messages"]) if m.get("role") == "user"),
            "",
        )
        if node in ("answer", "synthesize"):
            return ChatReply(content=self._text(node, user))
        return self._structured(body, self._object(node, user))

    def _object(self, node: str, user: str) -> dict[str, Any]:
        if node == "intent":
            reply = "Hi! Ask me about your notes." if self.intent == "chitchat" else ""
            return {"intent": self.intent, "reply": reply}
        if node == "condense":
            question = user.rsplit("Latest question:", 1)[-1].strip()
            return {"standalone_question": f"{question} (standalone)", "summary": "We talked."}
        if node == "plan":
            question = user.split("Question:", 1)[-1].strip()
            asked = self.aspects or [question]
            return {
                "aspects": [
                    {
                        "question": q,
                        "terms": ["UObject"],
                        "vault_queries": [q],
                        "web_queries": [f"{q} statement"],
                        "hypothetical_answer": "",
                    }
                    for q in asked
                ]
            }
        if node == "grade":
            numbers = [int(n) for n, _ in _CITE_RE.findall(user)]
            return {"scores": [{"id": n, "score": self.score} for n in numbers]}
        raise AssertionError(f"no structured reply for node {node!r}")

    def _text(self, node: str, user: str) -> str:
        if node == "answer":
            cites = [cite for _, cite in _CITE_RE.findall(user)]
            return f"Scripted answer from the notes {cites[0]}." if cites else "Nothing found."
        parts = re.findall(r"^\(\d+\) .*$\n(.*)$", user, re.MULTILINE)
        return "Combined: " + " ".join(parts)

    @staticmethod
    def _structured(body: dict[str, Any], obj: dict[str, Any]) -> ChatReply:
        tools = body.get("tools") or []
        if tools:  # function calling: answer with a call of the (only) tool
            return ChatReply(tool_calls=[ToolCall(tools[0]["function"]["name"], obj)])
        return ChatReply.json(obj)


def chat_provider(base_url: str, **options: Any) -> ChatProvider:
    """A `ChatProvider` on the fake server, built the way the settings build it."""
    from vault_rag.graph.llm import build_chat_provider
    from vault_rag.settings import Settings

    settings = Settings(
        llm_base_url=base_url,
        llm_model="fake-chat",
        llm_max_retries=options.pop("max_retries", 0),
        llm_timeout=options.pop("timeout", 10.0),
        **options,
    )
    provider = build_chat_provider(settings)
    assert provider is not None
    return provider


def resources(llm: ChatProvider | None = None, web: Any = None, **configuration: Any) -> Resources:
    return Resources(
        index=shared_index(), llm=llm, web=web, defaults=Configuration(**configuration)
    )


@dataclass
class Run:
    events: list[AskEvent]

    @property
    def final(self) -> dict[str, Any]:
        finals = [e.data for e in self.events if e.event == "final"]
        assert finals, f"no final event: {self.errors}"
        return finals[-1]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.event == "error"]

    @property
    def nodes(self) -> list[str]:
        """The steps that reported progress, in first-seen order (fan-out tasks once)."""
        seen = [e.data["node"] for e in self.events if e.event == "progress" and "node" in e.data]
        return list(dict.fromkeys(seen))

    @property
    def streamed(self) -> str:
        return "".join(e.data["text"] for e in self.events if e.event == "delta")

    def progress(self, node: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.event == "progress" and e.data.get("node") == node]


def collect(question: str, res: Resources, **options: Any) -> Run:
    async def go() -> list[AskEvent]:
        return [event async for event in run_question(question, res, **options)]

    return Run(asyncio.run(go()))
