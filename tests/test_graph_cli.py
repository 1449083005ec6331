"""`vault-rag ask` and `vault-rag check-typos` as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from test_graph_helpers import shared_index
from vault_rag.cli import app
from vault_rag.index.vault_index import VaultIndex
from vault_rag.services.typos import prose_lines

from fakes.openai_server import ChatReply, FakeOpenAIServer

runner = CliRunner()
QUESTION = "BeginPlay 和构造函数有什么区别？构造函数里能访问 GetWorld 吗？"
TINY_NOTE = """---
tags: [ue]
---
# Timers

`GetWorldTimerManager().SetTimer` schedules a delegate; keep the FTimerHandle to clear it.
Timers pause with the game unless the manager is told otherwise.

```cpp
FTimerHandle Handle;  // recieve is not checked inside code
```

This line has a teh typo.
"""


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LLM_MODEL", "LLM_BASE_URL", "LLM_API_KEY", "TAVILY_API_KEY", "WEB_MODE"):
        monkeypatch.delenv(f"VAULT_RAG_{name}", raising=False)
    monkeypatch.delenv("VAULT_RAG_CONFIG", raising=False)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the shared sample-vault index: `ask` refreshes it (nothing to do) in place."""
    target = tmp_path_factory.mktemp("cli") / "data"
    shutil.copytree(shared_index().data_dir, target)
    return target


@pytest.fixture
def tiny_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Timers.md").write_text(TINY_NOTE, encoding="utf-8")
    return vault


def test_ask_json_without_a_model_answers_with_real_citations(sample_vault, data_dir):
    args = ["ask", QUESTION, "--vault", str(sample_vault), "--data-dir", str(data_dir), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    for key in ("answer", "citations", "aspects", "intent", "llm_calls", "prompt_tokens"):
        assert key in payload
    assert payload["completion_tokens"] == 0 and payload["llm_calls"] == 0
    assert payload["intent"] == "on_topic" and len(payload["aspects"]) == 1
    assert payload["mode"] == "strict" and payload["thread_id"] and payload["answer_id"]
    assert "No language model is configured" not in payload["answer"]  # a note instead
    assert any("No language model is configured" in n for n in payload["notes"])
    index = VaultIndex(sample_vault, data_dir, shared_index().provider)
    try:
        chunks = index.manifest.chunks([c["chunk_id"] for c in payload["citations"]])
        assert len(chunks) == len(payload["citations"]) >= 1
        for citation in payload["citations"]:
            chunk = chunks[citation["chunk_id"]]
            assert citation["note_path"] == chunk.note_path and citation["origin"] == chunk.origin
            assert (
                citation["heading"] == chunk.hierarchy_path and citation["anchor"] == chunk.anchor
            )
        assert "Gameplay/Actor 生命周期.md" in {c["note_path"] for c in payload["citations"]}
        quoted = [line[2:] for line in payload["answer"].splitlines() if line.startswith("> ")]
        assert all(any(q in c.text for c in chunks.values()) for q in quoted)
    finally:
        index.close()


def test_ask_streams_the_answer_and_lists_sources(sample_vault, data_dir):
    args = ["ask", QUESTION, "--vault", str(sample_vault), "--data-dir", str(data_dir)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "No language model is configured" in result.stderr  # printed as a note
    assert "Sources:" in result.stdout and "Gameplay/Actor 生命周期.md" in result.stdout
    assert "model calls 0" in result.stderr


def test_ask_indexes_a_new_vault_first_and_notes_a_missing_web_key(tiny_vault, tmp_path):
    args = ["ask", "How do I clear a timer?", "--vault", str(tiny_vault)]
    args += ["--data-dir", str(tmp_path / "data"), "--mode", "hybrid", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["mode"] == "hybrid"
    assert {c["note_path"] for c in payload["citations"]} == {"Timers.md"}
    assert any("no Tavily API key" in n for n in payload["notes"])
    assert "FTimerHandle" in payload["answer"]


def test_ask_about_a_note_prefers_it_and_says_so(tiny_vault, tmp_path):
    (tiny_vault / "Notes").mkdir()
    (tiny_vault / "Notes" / "Delays.md").write_text(
        "# Delays\n\nA latent Delay node waits, then runs the rest of the graph once.\n",
        encoding="utf-8",
    )
    data = ["--vault", str(tiny_vault), "--data-dir", str(tmp_path / "data")]
    args = ["ask", "How do I clear a timer?", *data, "--json"]
    plain = json.loads(runner.invoke(app, args).stdout)
    assert plain["citations"][0]["note_path"] == "Timers.md" and plain["focus"] is None
    result = runner.invoke(app, [*args, "--about", "Delays"])  # a name, as a link resolves it
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["citations"][0]["note_path"] == "Notes/Delays.md"
    assert payload["focus"]["path"] == "Notes/Delays.md" and payload["focus"]["cited"] >= 1
    missing = runner.invoke(app, [*args, "--about", "Nowhere"])
    assert missing.exit_code == 2 and "no indexed note 'Nowhere'" in missing.output


def test_check_typos_reports_only_real_suspects_and_never_edits(tiny_vault, tmp_path, monkeypatch):
    before = (tiny_vault / "Timers.md").read_bytes()
    with FakeOpenAIServer() as server:
        server.default_chat_reply = lambda body: ChatReply.json(
            {
                "typos": [
                    {"line": 14, "suspect": "teh", "suggestion": "the"},  # off by one: relocated
                    {"line": 3, "suspect": "recieve", "suggestion": "receive"},  # in code: not sent
                    {"line": 8, "suspect": "invented", "suggestion": "x"},  # not in the note
                ]
            }
        )
        monkeypatch.setenv("VAULT_RAG_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("VAULT_RAG_LLM_MODEL", "fake-chat")
        monkeypatch.setenv("VAULT_RAG_LLM_MAX_RETRIES", "0")
        out = tmp_path / "report"
        args = ["check-typos", "--vault", str(tiny_vault), "--out", str(out), "--json"]
        result = runner.invoke(app, args)
        sent = server.chat_requests[0].body["messages"][-1]["content"]
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [(t["note"], t["line"], t["suspect"], t["suggestion"]) for t in payload["typos"]] == [
        ("Timers.md", 13, "teh", "the")
    ]
    assert "a teh typo" in payload["typos"][0]["context"]
    assert "recieve" not in sent and "tags:" not in sent  # code and frontmatter are skipped
    assert (out / "typos.md").read_text("utf-8").count("| Timers.md | 13 | teh |") == 1
    assert json.loads((out / "typos.json").read_text("utf-8"))["notes_checked"] == 1
    assert (tiny_vault / "Timers.md").read_bytes() == before


def test_check_typos_needs_a_model(tiny_vault):
    result = runner.invoke(app, ["check-typos", "--vault", str(tiny_vault)])
    assert result.exit_code == 1 and "needs a language model" in result.stderr


def test_prose_lines_keep_real_line_numbers():
    numbers = [n for n, _ in prose_lines(TINY_NOTE)]
    assert numbers == [4, 6, 7, 13]
