"""Issue 31 (also fix): the extractive answer quoted Obsidian block ids (`… ^gc-pitfall` in the
demo). A quote shows the text as Obsidian renders it; the id stays in the note for links."""

from __future__ import annotations

from pathlib import Path

from vault_rag.graph.extractive import extractive_answer, without_block_ids
from vault_rag.graph.state import Doc


def test_the_demo_quote_has_no_block_id(sample_vault: Path) -> None:
    text = (sample_vault / "C++" / "UObject 与 GC.md").read_text(encoding="utf-8")
    assert " ^gc-pitfall" in text  # the note keeps it (embeds and links use it)
    doc = Doc(id="c1", text=text, cite="[[UObject 与 GC]]")
    answer, used = extractive_answer("UObject 指针 没有 UPROPERTY 会被 GC 回收吗", [doc])
    assert used == ["c1"]
    assert "UPROPERTY" in answer
    assert "^gc-pitfall" not in answer, answer


def test_block_ids_are_left_out_but_code_is_quoted_as_is() -> None:
    excerpt = (
        "A paragraph. ^para-1\n\n- item ^item-2\n\n| a |\n|---|\n| b |\n^table-3\n\n"
        "```cpp\nint x = y ^mask-4\n```\nCaret in text: 2^10 and x ^ y stay."
    )
    assert without_block_ids(excerpt) == (
        "A paragraph.\n\n- item\n\n| a |\n|---|\n| b |\n\n"
        "```cpp\nint x = y ^mask-4\n```\nCaret in text: 2^10 and x ^ y stay."
    )
