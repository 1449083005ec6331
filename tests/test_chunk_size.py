"""Size units: one CJK character or one Latin-style word counts one; punctuation counts zero."""

from __future__ import annotations

import pytest

from vault_rag.chunking.size import is_cjk, text_size, unit_spans


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("   \n\t ", 0),
        ("hello world", 2),
        ("UPrimitiveComponent", 1),
        ("snake_case_name and camelCase", 3),
        ("C++ and C# are languages", 5),
        ("x++", 1),
        ("3.14 is pi", 4),  # "3" and "14" are separate runs
        ("don't", 2),
        ("GetWorld()->SpawnActor<AActor>(Class);", 4),
        ("café", 1),
        ("cafe\u0301 latte", 2),  # decomposed é stays one word
        ("渲染管线", 4),
        ("渲染，管线。", 4),  # CJK punctuation counts zero
        ("「引号」！？；、", 2),
        ("ひらがなカタカナ", 8),
        ("한국어 텍스트", 6),
        ("虚幻引擎 UPrimitiveComponent 的用法", 8),
        ("hello世界", 3),  # a CJK character ends a Latin word
        ("々〆〇", 3),
        ("ＡＢＣ全角", 3),  # full-width Latin letters are a word, then two ideographs
        ("!!! --- ... ***", 0),
        ("emoji 🎉 here", 2),
        ("\x00\ud800", 0),  # NUL and a lone surrogate are no content
        ("𠀀𠀁", 2),  # CJK extension B
    ],
)
def test_text_size(text: str, expected: int) -> None:
    assert text_size(text) == expected


def test_is_cjk() -> None:
    assert is_cjk("中") and is_cjk("か") and is_cjk("한") and is_cjk("ア")
    assert not is_cjk("。") and not is_cjk("，") and not is_cjk("a") and not is_cjk("・")


def test_unit_spans_cover_words_and_characters() -> None:
    text = "用 C++ 写UObject。"
    spans = unit_spans(text)
    assert [text[s:e] for s, e in spans] == ["用", "C++", "写", "UObject"]
    assert len(spans) == text_size(text)


def test_unit_spans_respects_bounds() -> None:
    text = "alpha beta gamma"
    assert [text[s:e] for s, e in unit_spans(text, 6, 16)] == ["beta", "gamma"]
