"""Property tests of the extractive quote: for any chunk text, the quote is a run of whole
markdown blocks — it never opens or closes a fence it does not also close or open, and it
parses to the same blocks as the source text's blocks on those lines."""

from __future__ import annotations

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from test_chunker_properties import MARKDOWN
from vault_rag.graph.extractive import best_excerpt, blockquote, excerpt_lines, extractive_answer
from vault_rag.index.bm25.tokenize import tokenize

_MD = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).disable("inline")
_LISTS = {"bullet_list_open", "bullet_list_close", "ordered_list_open", "ordered_list_close"}
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Terms drawn from the same vocabulary as the generated text, so quotes move around the chunk.
TERMS = st.sets(st.sampled_from(["alpha", "beta", "uprimitivecomponent", "渲染", "材质", "wow"]))


def parse(text: str) -> list[Token]:
    return _MD.parse(text.replace("\r", " "))


def shape(tokens: list[Token]) -> list[tuple[str, str, str, str]]:
    """Block structure as it renders: list wrappers left out (one item quoted alone becomes a
    one-item list of the same kind), and whether a paragraph is tight or loose ignored."""
    return [(t.type, t.tag, t.info, t.content) for t in tokens if t.type not in _LISTS]


def displayed(tokens: list[Token]) -> list[tuple[str, str, str, str]]:
    """`shape` with tabs shown as the spaces up to their tab stop."""
    return [(ty, tag, info, content.expandtabs(4)) for ty, tag, info, content in shape(tokens)]


def source_blocks(tokens: list[Token], start: int, end: int) -> list[Token]:
    """The source's tokens of lines [start, end): every token whose block lies inside, except
    list wrappers, which may span beyond the quoted items."""
    inside: list[Token] = []
    stack: list[bool] = []  # for each open container: is it inside the range?
    for token in tokens:
        if token.nesting == 1:
            if not token.map:  # table cells and the like: inside when their parent is
                within = bool(stack) and stack[-1]
            elif token.type == "list_item_open":  # its map may run over trailing blank lines
                within = start <= token.map[0] < end
            else:
                within = start <= token.map[0] and token.map[1] <= end
            stack.append(within)
            if within:
                inside.append(token)
        elif token.nesting == -1:
            if stack.pop():
                inside.append(token)
        elif (stack and stack[-1]) or (token.map and start <= token.map[0] and token.map[1] <= end):
            inside.append(token)
    return inside


@PROPERTY
@given(MARKDOWN, TERMS, st.integers(20, 600))
def test_quote_is_whole_blocks(text: str, terms: set[str], limit: int):
    note(f"text={text!r} terms={terms!r} limit={limit}")
    span = excerpt_lines(text, terms, limit)
    if span is None:
        assert best_excerpt(text, terms, limit) == ""
        return
    start, end = span
    lines = text.split("\n")
    excerpt = best_excerpt(text, terms, limit)
    assert excerpt == "\n".join(lines[start:end])  # verbatim, blank lines included
    assert excerpt.strip()
    source = parse(text)
    # Never half a fence: every fenced or indented code block touching the quoted lines lies
    # wholly inside them.
    for token in source:
        if token.type in ("fence", "code_block") and token.map:
            first, last = token.map
            if first < end and start < last:
                assert start <= first and last <= end, (token.map, span)
    # The quote parses, on its own, to the same blocks as those lines of the source.
    ended = excerpt + ("\n" if end < len(lines) else "")  # the source's last quoted line ends too
    assert shape(parse(ended)) == shape(source_blocks(source, start, end))


@PROPERTY
@given(MARKDOWN, TERMS)
def test_blockquoted_answer_keeps_the_blocks(text: str, terms: set[str]):
    excerpt = best_excerpt(text, terms)
    if not excerpt.strip():
        return
    quoted = parse(blockquote(excerpt))
    # One blockquote holding exactly the excerpt's blocks.
    assert quoted[0].type == "blockquote_open" and quoted[-1].type == "blockquote_close"
    assert sum(t.type == "blockquote_open" and t.level == 0 for t in quoted) == 1
    # (the quote turns indentation tabs into spaces, `blockquote`: compared as displayed)
    assert displayed(quoted[1:-1]) == displayed(parse(excerpt))


def test_code_block_is_quoted_with_both_fences_and_blank_lines_survive():
    text = (
        "## Setup\n\n"
        "Intro about cats.\n\n"
        "- first item about BeginPlay\n"
        "  child line of the first item\n"
        "- second item\n\n"
        "```cpp\n"
        "// UPROPERTY()\n"
        "void BeginPlay() override;\n\n"
        "int32 Health;\n"
        "```\n\n"
        "Closing words.\n"
    )
    excerpt = best_excerpt(text, set(tokenize("BeginPlay override")), max_chars=200)
    assert excerpt.startswith("- first item about BeginPlay\n  child line of the first item")
    assert "```cpp\n// UPROPERTY()\nvoid BeginPlay() override;\n\nint32 Health;\n```" in excerpt
    assert "\n\n```cpp" in excerpt  # the blank line between the list and the code is kept
    assert "Intro about cats" not in excerpt and "## Setup" not in excerpt
    answer, used = extractive_answer("BeginPlay override", [_doc(text)])
    assert used == ["c1"]
    assert "> ```cpp\n> // UPROPERTY()\n> void BeginPlay() override;\n>\n> int32 Health;" in answer


def test_a_long_code_block_is_quoted_whole_not_cut():
    code = "```cpp\n" + "".join(f"int32 Value{i} = {i}; // BeginPlay\n" for i in range(40))
    text = "Short intro.\n\n" + code + "```\n"
    excerpt = best_excerpt(text, {"beginplay"}, max_chars=100)
    assert excerpt == code + "```"


def _doc(text: str) -> dict:
    return {"id": "c1", "kind": "vault", "text": text, "cite": "[[Note#Setup]]"}


def test_a_tab_indented_code_line_stays_code_in_the_quote():
    # after "> " a tab reaches the next tab stop two columns on: the line would be a paragraph
    for excerpt in ("\tcode()", " \tcode()", "intro\n\n\tcode()"):
        quoted = parse(blockquote(excerpt))
        assert [t.type for t in quoted if t.type in ("code_block", "paragraph_open")] == [
            t.type for t in parse(excerpt) if t.type in ("code_block", "paragraph_open")
        ]
        assert any(t.type == "code_block" and t.content == "code()\n" for t in quoted)
