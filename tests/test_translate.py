"""Cross-language questions (issue 28 item 3): script detection, and the one bounded
translation request against a wire-level fake OpenAI server (real HTTP on loopback)."""

from __future__ import annotations

import pytest

from vault_rag.chunking.text_scripts import dominant_script, merged, script_counts, script_of
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.retrieval.translate import (
    QueryTranslator,
    clean_reply,
    translate_question,
    translator_for,
    wanted_language,
)
from vault_rag.settings import Settings

from fakes.openai_server import ChatReply, ErrorReply, FakeOpenAIServer, unused_base_url

ZH = "怎么把一个标签页固定住，不让它被别的笔记替换？"


# -- script detection ------------------------------------------------------------------------
def test_cjk_counts_characters_and_alphabets_count_words():
    assert script_counts("怎么在 Obsidian 里设置同步？") == {"han": 8, "latin": 1}
    assert script_counts("How do I sync my vault?") == {"latin": 6}
    assert script_counts("Как дела у тебя") == {"cyrillic": 4}
    assert script_counts("안녕하세요") == {"hangul": 5}
    assert script_counts("1234 ... !!") == {}


def test_code_is_left_out():
    code = "```cpp\nvoid Tick(float DeltaTime) { Super::Tick(DeltaTime); }\n```"
    text = f"中文说明\n\n{code}\n用 `GetWorld()` 取得"
    assert script_counts(text) == {"han": 7}
    # an unclosed fence runs to the end of the text
    assert script_counts("说明\n```\nint a = b + c;\n") == {"han": 2}


def test_kana_makes_han_japanese_and_chinese_stays_han():
    assert merged(script_counts("これは日本語の文章です")) == {"japanese": 11}
    assert script_of("これは日本語の文章です") == "japanese"
    assert script_of("这是中文的句子") == "han"


def test_dominant_script_needs_a_majority():
    assert dominant_script({"han": 60, "latin": 40}) == "han"
    assert dominant_script({"han": 50, "latin": 50}) is None
    assert dominant_script({}) is None
    assert script_of("UE5 的 GameMode 和 GameState 有什么区别") == "han"
    assert script_of("What does 同步 mean") == "latin"


def test_wanted_language():
    assert wanted_language(ZH, "latin", None) == "English"
    assert wanted_language("how do I pin a tab", "han", None) == "Chinese"
    assert wanted_language("how do I pin a tab", "latin", None) is None
    assert wanted_language(ZH, None, None) is None  # mixed vault: no translation
    assert wanted_language("!!!", "latin", None) is None
    assert wanted_language(ZH, "latin", "French") == "French"  # the translate_to setting


def test_a_translation_may_be_about_as_long_as_its_question():
    from vault_rag.retrieval.translate import longest_translation

    assert longest_translation(ZH, "latin") == 1.5 * 21  # 21 Han characters
    assert longest_translation("how do I pin a tab", "han") == 3.0 * 6
    assert longest_translation("pin", "cyrillic") == 2.0 * 4  # short: room for a few words


def test_clean_reply_takes_the_first_line_without_labels_or_quotes():
    assert clean_reply('\n"How do I pin a tab?"\nThis keeps it open.') == "How do I pin a tab?"
    assert clean_reply("Translation: How do I pin a tab?") == "How do I pin a tab?"
    assert clean_reply("  \n ") == ""


# -- the request -----------------------------------------------------------------------------
PIN = "How do I pin a tab so that another note does not replace it?"
# The hash stand-in embedder relates texts by shared words: a bar no pair reaches, or none.
ANY = -1.0
NEVER = 1.01


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def _translator(server: FakeOpenAIServer, **options) -> QueryTranslator:
    return QueryTranslator("smollm2", server.base_url, **options)


def test_a_question_in_another_script_is_translated_with_one_bounded_request(server):
    server.queue_chat(ChatReply(PIN, usage={"prompt_tokens": 40, "completion_tokens": 14}))
    translator = _translator(server, max_tokens=64)
    out = translate_question(ZH, "latin", translator, HashProvider(), ANY)
    assert out.text == PIN and out.asked and out.language == "English"
    assert out.tokens == (40, 14)
    (request,) = server.chat_requests
    body = request.body
    assert body["max_tokens"] == 64 and body["stream"] is False and body["model"] == "smollm2"
    assert "into English" in body["messages"][0]["content"]
    assert body["messages"][1] == {"role": "user", "content": ZH}


def test_a_question_in_the_vaults_script_sends_nothing(server):
    out = translate_question(
        "how do I pin a tab?", "latin", _translator(server), HashProvider(), ANY
    )
    assert out.text is None and not out.asked
    assert server.chat_requests == []


def test_without_a_model_there_is_no_translator():
    assert translator_for(Settings(llm_model=None)) is None
    assert translator_for(Settings(llm_model="m", translate_queries=False)) is None
    built = translator_for(Settings(llm_model="m", llm_base_url="http://127.0.0.1:9/v1"))
    assert built is not None and built.url == "http://127.0.0.1:9/v1/chat/completions"
    out = translate_question(ZH, "latin", None, HashProvider(), ANY)
    assert out.text is None and not out.asked


def test_a_timeout_means_no_translation(server):
    server.delay = 1.5
    server.queue_chat(ChatReply(PIN))
    out = translate_question(ZH, "latin", _translator(server, timeout=0.3), HashProvider(), ANY)
    assert out.text is None and out.asked and "timed out" in out.reason


@pytest.mark.parametrize(
    "reply, reason",
    [
        (ErrorReply(500, "boom"), "HTTP 500"),
        (ChatReply("标签页固定的方法"), "not in English"),  # a small model answering in Chinese
        (ChatReply(""), "empty"),
        (ChatReply(ZH), "not in English"),
        # SmolLM2-135M answering instead of translating (a real reply, first line)
        (
            ChatReply(
                "The code is written in Python, but it's not available for display. Please "
                "provide the actual code or a link to the source file where you'd like to see it."
            ),
            "too long",
        ),
    ],
)
def test_unusable_replies_mean_no_translation(server, reply, reason):
    server.queue_chat(reply)
    out = translate_question(ZH, "latin", _translator(server), HashProvider(), ANY)
    assert out.text is None and reason in out.reason


def test_a_reply_unrelated_to_the_question_is_not_used(server):
    server.queue_chat(ChatReply(PIN))
    out = translate_question(ZH, "latin", _translator(server), HashProvider(), NEVER)
    assert out.text is None and "unrelated" in out.reason


def test_an_unreachable_server_means_no_translation():
    translator = QueryTranslator("m", unused_base_url(), timeout=2)
    out = translate_question(ZH, "latin", translator, HashProvider(), ANY)
    assert out.text is None and "unreachable" in out.reason


def test_eval_translate_scores_the_search_with_translated_questions(tmp_path, monkeypatch, server):
    import json

    from typer.testing import CliRunner

    from vault_rag.cli import app

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Tabs.md").write_text("# Tabs\n\n## Pin a tab\n\nRight-click a tab, Pin.\n", "utf-8")
    (vault / "Themes.md").write_text("# Themes\n\nBrowse and install themes.\n", "utf-8")
    rows = [
        {"id": "q1", "question": "怎么 pin 一个 tab？", "gold": ["Tabs.md"]},
        {"id": "q2", "question": "how do I install a theme", "gold": ["Themes.md"]},
    ]
    qa = tmp_path / "qa.jsonl"
    qa.write_text(
        "".join(
            json.dumps({**r, "kind": "cross-lingual", "lang": "zh" if r["id"] == "q1" else "en"})
            + "\n"
            for r in rows
        ),
        "utf-8",
    )
    args = ["eval", str(qa), "--vault", str(vault), "--data-dir", str(tmp_path / "d"), "--json"]
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    runner = CliRunner()
    refused = runner.invoke(app, [*args, "--translate"])
    assert refused.exit_code == 1 and "--translate needs a chat model" in refused.output
    server.queue_chat(ChatReply("How do I pin a tab?"))
    monkeypatch.setenv("VAULT_RAG_LLM_MODEL", "smollm2")
    monkeypatch.setenv("VAULT_RAG_LLM_BASE_URL", server.base_url)
    result = runner.invoke(app, [*args, "--translate"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["systems"]) == {"ours", "ours+translate"}
    translation = report["translation"]
    assert translation["vault_script"] == "latin"
    assert translation["asked"] == 1 and len(server.chat_requests) == 1  # q2 is English
    assert translation["pairs"][0]["question"] == rows[0]["question"]
    assert translation["pairs"][0]["language"] == "English"
    assert report["options"]["translate"].startswith("smollm2 at ")
