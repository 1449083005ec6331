"""Cross-language questions in the index and the answer graph (issue 28 item 3).

The vault's script is counted at index time (one row per note in the manifest, filled in for
older manifests by the next index run). In the graph, a chat model configured through the
settings (a wire-level fake OpenAI server on loopback) translates a question in another script
once per thread; the translation is the second vault query, after the question itself; a
timeout falls back to the question alone; without a model nothing is sent. The index uses the
real bundled embedding model, so the translation passes the real relevance bar.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from test_graph_helpers import ScriptedModel, chat_provider, collect, shared_provider
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.graph.config import Configuration, Resources
from vault_rag.graph.nodes.plan import plan
from vault_rag.graph.state import State
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.settings import Settings

from fakes.openai_server import ChatReply, FakeOpenAIServer

NOTES = {
    "Tabs.md": "# Tabs\n\n## Pin a tab\n\nRight-click a tab and select Pin. A pinned tab keeps "
    "its note: opening a link from it opens a new tab instead of replacing the note.\n",
    "Themes.md": "# Themes\n\nOpen Settings, then Appearance, and browse community themes. "
    "Select a theme and install it; uninstall it from the same list.\n",
    "Sync.md": "# Sync\n\nSync keeps your notes up to date on every device. Exclude a folder "
    "in the selective sync settings.\n",
}
ZH = "怎么把标签页固定住，不让别的笔记替换掉它？"
PIN = "How do I pin a tab so that another note does not replace it?"


def _write(vault: Path, notes: dict[str, str]) -> Path:
    vault.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (vault / name).write_text(text, encoding="utf-8")
    return vault


def _is_translation(body: dict[str, Any]) -> bool:
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    return system.startswith("You translate")


class Model:
    """The scripted graph model, plus a translator that answers `PIN`."""

    def __init__(self) -> None:
        self.scripted = ScriptedModel()
        self.translations = 0

    def __call__(self, body: dict[str, Any]):
        if _is_translation(body):
            self.translations += 1
            return ChatReply(PIN)
        return self.scripted(body)


@pytest.fixture(scope="module")
def english(tmp_path_factory) -> VaultIndex:
    root = tmp_path_factory.mktemp("xlang")
    index = VaultIndex(_write(root / "vault", NOTES), root / "data", shared_provider())
    Indexer(index).run()
    yield index
    index.close()


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        srv.default_chat_reply = Model()
        yield srv


def _resources(index: VaultIndex, server: FakeOpenAIServer | None, **settings: Any) -> Resources:
    if server is None:
        return Resources(index=index, defaults=Configuration())
    values = {"llm_model": "fake-chat", "llm_base_url": server.base_url, **settings}
    return Resources(
        index=index,
        llm=chat_provider(server.base_url),
        defaults=Configuration(),
        settings=Settings(**values),
    )


def _plan(state: State, resources: Resources) -> dict[str, Any]:
    return asyncio.run(plan(state, {"configurable": {"resources": resources}}))


def test_the_vault_script_is_counted_at_index_time(tmp_path):
    vault = _write(tmp_path / "v", NOTES)
    index = VaultIndex(vault, tmp_path / "d", HashProvider())
    try:
        Indexer(index).run()
        assert index.vault_script() == "latin"
        chinese = "# 同步\n\n" + "同步可以让你的笔记在每一台设备上保持最新。" * 12
        (vault / "同步.md").write_text(chinese, encoding="utf-8")
        Indexer(index).run()
        assert index.vault_script() == "han"
        (vault / "同步.md").unlink()
        Indexer(index).run()
        assert index.vault_script() == "latin"
        # A manifest from before the counts: the next index run fills them in.
        index.manifest.db.execute("DELETE FROM note_scripts")
        assert index.vault_script() is None
        Indexer(index).run()
        assert index.vault_script() == "latin"
    finally:
        index.close()


def test_the_translation_is_the_second_query_and_is_cached_in_the_thread(english, server):
    resources = _resources(english, server)
    update = _plan(State(user_question=ZH, standalone_question=ZH), resources)
    queries = update["aspects"][0]["vault_queries"]
    assert queries[:2] == [ZH, PIN]  # the question first, as the graph's guards require
    assert update["translations"] == {ZH: PIN}
    assert update["usage"]["llm_calls"] >= 2  # the plan and the translation
    model = server.default_chat_reply
    assert model.translations == 1
    # Asked again in the same thread: the state's translation, no second request.
    again = _plan(
        State(user_question=ZH, standalone_question=ZH, translations=update["translations"]),
        resources,
    )
    assert again["aspects"][0]["vault_queries"][:2] == [ZH, PIN]
    assert model.translations == 1 and "translations" not in again


def test_a_question_in_the_vaults_script_is_not_translated(english, server):
    update = _plan(State(user_question="how do I pin a tab?"), _resources(english, server))
    assert "translations" not in update
    assert server.default_chat_reply.translations == 0


def test_a_timeout_searches_the_question_alone(english, server):
    server.delay = 1.0
    resources = _resources(english, server, translate_timeout=0.2)
    update = _plan(State(user_question=ZH, standalone_question=ZH), resources)
    queries = update["aspects"][0]["vault_queries"]
    assert queries[0] == ZH and PIN not in queries
    assert update["translations"] == {ZH: ""}  # remembered: not asked again in this thread
    assert any("not translated" in note and "timed out" in note for note in update["notes"])


def test_without_a_model_nothing_changes(english, server):
    update = _plan(State(user_question=ZH, standalone_question=ZH), _resources(english, None))
    assert update["aspects"][0]["vault_queries"] == [ZH]
    assert "translations" not in update and server.requests == []


def test_a_thread_translates_once_and_another_thread_again(english, server):
    """Whole turns through the graph with a checkpointer. Asked about a note (the plugin's
    "ask about this note"): a three-note vault is too small for BM25 to count as evidence, and
    by the cosine alone the intent check would call the question not covered."""
    resources = _resources(english, server)
    saver = InMemorySaver()
    ask = {"checkpointer": saver, "note": {"path": "Tabs.md"}}
    first = collect(ZH, resources, thread_id="a", **ask)
    assert not first.errors
    searched = [p["query"] for p in first.progress("retrieve_vault")]
    assert ZH in searched and PIN in searched
    assert first.final["citations"][0]["note_path"] == "Tabs.md"
    model = server.default_chat_reply
    assert model.translations == 1
    collect(ZH, resources, thread_id="a", **ask)
    # (the second turn's standalone question may be reworded by the condenser: only a new
    # wording costs a call)
    asked_twice = model.translations
    collect(ZH, resources, thread_id="a", **ask)
    assert model.translations == asked_twice  # the same turn again: from the thread
    collect(ZH, resources, thread_id="b", **ask)
    assert model.translations == asked_twice + 1
