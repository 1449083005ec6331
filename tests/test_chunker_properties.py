"""Property tests: for any markdown the chunker never raises, never loses text and never splits
a fenced code block (unless a token cap forces it to window one, which it then marks)."""

from __future__ import annotations

import hashlib
import itertools
import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from vault_rag.chunking.chunker import ChunkOptions, chunk_note
from vault_rag.chunking.size import text_size
from vault_rag.chunking.types import Chunk
from vault_rag.vault.types import ResolvedNote, Span

PATH = "notes/Prop Note.md"
# CHUNKER_PROPERTY_SCALE=20 runs twenty times as many examples (e.g. nightly); the default keeps
# this file well under half a minute.
_SCALE = float(os.environ.get("CHUNKER_PROPERTY_SCALE", "1"))


def _settings(examples: int) -> settings:
    return settings(
        max_examples=max(1, int(examples * _SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


# ---- markdown generators ----------------------------------------------------------------------

TOKENS = st.sampled_from(
    [
        "alpha", "beta", "UPrimitiveComponent", "C++", "end.", "why?", "wow!", "#tag",
        "[[Link|alias]]", "`code`", "**bold**", "*em*", "$x^2$", "e.g.", "3.14", "<b>", "|",
        "渲染", "管线。", "材质！", "参数？", "蓝图；", "「引用」", "カタカナ", "한국어",
        "\\#", "&amp;",
    ]
)  # fmt: skip
RANDOM_TEXT = st.text(st.characters(exclude_categories=()), max_size=12)  # NUL, surrogates, …
INLINE = st.lists(st.one_of(TOKENS, TOKENS, RANDOM_TEXT), min_size=1, max_size=14).map(" ".join)
CJK_SENTENCE = st.text(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x4E60), min_size=1, max_size=40
).map(lambda s: s + "。")
LINE = st.one_of(INLINE, CJK_SENTENCE)

HEADING = st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 6), INLINE)
SETEXT = st.builds(lambda t, u: f"{t}\n{u}", INLINE, st.sampled_from(["===", "---"]))
PARAGRAPH = st.lists(LINE, min_size=1, max_size=8).flatmap(
    lambda lines: st.sampled_from([" ", "\n"]).map(lambda sep: sep.join(lines))
)
CODE_LINE = st.one_of(INLINE, st.just("# not a heading"), HEADING, st.just(""))
FENCE = st.builds(
    lambda marker, info, lines, closed: (
        f"{marker}{info}\n" + "".join(f"{line}\n" for line in lines) + (marker if closed else "")
    ),
    st.sampled_from(["```", "~~~", "````"]),
    st.sampled_from(["", "python", "cpp"]),
    st.lists(CODE_LINE, max_size=8),
    st.booleans(),
)
INDENTED = st.lists(INLINE, min_size=1, max_size=4).map(
    lambda ls: "\n".join("    " + x for x in ls)
)
ITEM = st.builds(
    lambda marker, head, kids, fence: (
        f"{marker} {head}"
        + "".join(f"\n  {k}" for k in kids)
        + ("\n  ```\n  # in list\n  ```" if fence else "")
    ),
    st.sampled_from(["-", "*", "1."]),
    LINE,
    st.lists(st.one_of(LINE, st.just("- nested item")), max_size=3),
    st.booleans(),
)
LIST = st.lists(ITEM, min_size=1, max_size=6).map("\n".join)
TABLE = st.lists(st.tuples(INLINE, INLINE), min_size=1, max_size=6).map(
    lambda rows: "| a | b |\n|---|---|\n" + "\n".join(f"| {x} | {y} |" for x, y in rows)
)
QUOTE = st.lists(st.one_of(LINE, HEADING, FENCE), min_size=1, max_size=4).map(
    lambda parts: "\n".join("> " + line for p in parts for line in p.split("\n"))
)
REFDEF = st.from_regex(r"[a-z]{1,4}", fullmatch=True).map(lambda r: f"[{r}]: http://x.org/{r}")
HTML = st.lists(INLINE, max_size=3).map(lambda ls: "<div>\n" + "\n".join(ls) + "\n</div>")
CALLOUT = st.lists(LINE, min_size=1, max_size=3).map(
    lambda ls: "> [!note] Title\n" + "\n".join("> " + x for x in ls)
)
MATH = st.lists(INLINE, max_size=3).map(lambda ls: "$$\n" + "\n".join(ls) + "\n$$")
BLOCK = st.one_of(
    HEADING, HEADING, SETEXT, PARAGRAPH, PARAGRAPH, FENCE, FENCE, INDENTED, LIST, TABLE, QUOTE,
    MATH, RANDOM_TEXT, REFDEF, HTML, CALLOUT,
)  # fmt: skip
SEPARATOR = st.sampled_from(["\n", "\n\n", "\n\n\n", "\r\n", "\n \n"])
MARKDOWN = st.lists(st.tuples(BLOCK, SEPARATOR), max_size=14).map(
    lambda parts: "".join(b + s for b, s in parts)
)


@st.composite
def options(draw: st.DrawFn, cap: bool = False, tokens: bool | None = None) -> ChunkOptions:
    """Options in size units or, like the index uses them, in (stand-in) tokens; `tokens=None`
    draws either, so every property below holds for both sizings."""
    target_max = draw(st.integers(3, 150))
    target_min = draw(st.integers(0, target_max))
    overlap = draw(st.integers(0, 60))
    in_tokens = draw(st.booleans()) if tokens is None else tokens
    sizing = {"count_tokens": quarter_chars, "size_in_tokens": True} if in_tokens else {}
    context = {"context_chars": draw(st.integers(0, 400))}
    if not cap:
        return ChunkOptions(target_min, target_max, overlap, **sizing, **context)
    max_tokens = draw(st.integers(12, 120))
    return ChunkOptions(
        target_min, target_max, overlap, max_tokens, quarter_chars, in_tokens, **context
    )


def quarter_chars(text: str) -> int:
    """A stand-in tokenizer: about four characters a token."""
    return (len(text) + 3) // 4


# ---- invariants -------------------------------------------------------------------------------

_FENCE_MD = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)


def own_note(text: str, body_start_line: int = 1) -> ResolvedNote:
    spans = [Span(0, len(text), PATH, body_start_line, body_start_line)] if text else []
    return ResolvedNote(PATH, text, {"tags": ["t"]}, body_start_line, spans)


def check_chunks(note: ResolvedNote, chunks: list[Chunk], opts: ChunkOptions) -> None:
    text = note.text
    covered = bytearray(len(text))
    ids: set[str] = set()
    prev: Chunk | None = None
    for chunk in chunks:
        assert "fallback" not in chunk.extra
        start, end = chunk.extra["char_start"], chunk.extra["char_end"]
        assert text[start:end] == chunk.text and chunk.text.strip()
        covered[start:end] = b"\x01" * (end - start)
        header = chunk.embed_text[: len(chunk.embed_text) - len(chunk.text)]
        assert chunk.embed_text.endswith(chunk.text) and header.endswith("\n\n")
        assert header.startswith("# Prop Note") or opts.max_tokens is not None
        sha = hashlib.sha256(chunk.embed_text.encode("utf-8", "surrogatepass")).hexdigest()
        assert chunk.content_hash == sha
        assert re.fullmatch("[0-9a-f]{16}", chunk.id) and chunk.id not in ids
        ids.add(chunk.id)
        assert chunk.size == text_size(chunk.text)
        assert chunk.note_path == PATH and chunk.tags == ("t",)
        assert chunk.line_start <= chunk.line_end
        assert chunk.hierarchy_path  # every unit is cited by a path (the title before headings)
        check_context(note, chunk, opts)
        overlap = chunk.extra["overlap"]
        assert 0 <= overlap <= opts.overlap_chars
        if prev is not None:  # in order; only the declared overlap is repeated
            prev_end = prev.extra["char_end"]
            assert prev.extra["char_start"] < start
            assert start + overlap >= prev_end
            assert not text[prev_end : start + overlap].strip()
            if overlap:
                assert start < prev_end
        prev = chunk
    lost = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    assert not lost, f"lost text at {lost[:5]}: {[text[i] for i in lost[:5]]}"


def check_context(note: ResolvedNote, chunk: Chunk, opts: ChunkOptions) -> None:
    """Small-to-big: the context contains the chunk, is an exact slice of the note, and stays
    within the bound unless the chunk alone is longer."""
    extra = chunk.extra
    if not opts.context_chars:
        assert "context_start" not in extra
        return
    lo, hi = extra["context_start"], extra["context_end"]
    start, end = extra["char_start"], extra["char_end"]
    assert lo <= start and end <= hi
    assert hi - lo <= max(opts.context_chars, end - start)
    assert extra.get("context", chunk.text) == note.text[lo:hi]
    assert extra["context_line_start"] <= chunk.line_start
    assert extra["context_line_end"] >= chunk.line_end


def fence_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of every fenced code block at any depth, trimmed of trailing blanks."""
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    ranges = []
    for tok in _FENCE_MD.parse(text.replace("\r", " ")):
        if tok.type == "fence" and tok.map:
            first, last = tok.map[0], tok.map[1] - 1
            end = starts[last + 1] - 1 if last + 1 < len(starts) else len(text)
            segment = text[starts[first] : end].rstrip()
            if segment.strip():
                ranges.append((starts[first], starts[first] + len(segment)))
    return ranges


def check_fences_whole(text: str, chunks: list[Chunk]) -> None:
    for start, end in fence_ranges(text):
        touching = [
            c for c in chunks if c.extra["char_start"] < end and start < c.extra["char_end"]
        ]
        if any(c.extra.get("code_window") for c in touching):
            continue
        assert any(
            c.extra["char_start"] <= start and end <= c.extra["char_end"] for c in touching
        ), f"fence {text[start:end]!r} split"


# ---- properties -------------------------------------------------------------------------------


@_settings(80)
@given(MARKDOWN, options(), st.integers(1, 30))
def test_any_markdown_is_chunked_completely(text: str, opts: ChunkOptions, first: int) -> None:
    note = own_note(text, first)
    chunks = chunk_note(note, opts)
    check_chunks(note, chunks, opts)
    check_fences_whole(text, chunks)
    assert all(not c.extra.get("code_window") for c in chunks)  # only a token cap windows
    for chunk in chunks:  # no embeds: lines count straight from body_start_line
        start, end = chunk.extra["char_start"], chunk.extra["char_end"]
        assert chunk.line_start == first + text.count("\n", 0, start)
        assert chunk.line_end == first + text.count("\n", 0, end - 1)
        assert (chunk.origin, chunk.origins) == (PATH, (PATH,))
    if not text.strip():
        assert chunks == []


@_settings(100)
@given(st.text(st.characters(exclude_categories=()), max_size=300), options())
def test_arbitrary_unicode_never_breaks_the_chunker(text: str, opts: ChunkOptions) -> None:
    note = own_note(text)
    check_chunks(note, chunk_note(note, opts), opts)


@_settings(60)
@given(MARKDOWN, options(cap=True))
def test_token_cap_holds_for_every_chunk(text: str, opts: ChunkOptions) -> None:
    note = own_note(text)
    chunks = chunk_note(note, opts)
    check_chunks(note, chunks, opts)
    check_fences_whole(text, chunks)
    assert opts.max_tokens is not None
    for chunk in chunks:
        assert "over_token_limit" not in chunk.extra
        assert quarter_chars(chunk.embed_text) <= opts.max_tokens


ORIGINS = ["lib/A.md", "lib/B.md", PATH]


@st.composite
def with_embeds(draw: st.DrawFn) -> ResolvedNote:
    """A note whose text is cut into spans from several origins at random offsets."""
    text = draw(MARKDOWN.filter(lambda t: len(t) > 1))
    cuts = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), max_size=6))))
    bounds = [0, *cuts, len(text)]
    spans, line = [], 1
    for start, end in itertools.pairwise(bounds):
        origin = draw(st.sampled_from(ORIGINS))
        own = origin == PATH
        spans.append(Span(start, end, origin, line if own else 40, line))
        line += text.count("\n", start, end)
    return ResolvedNote(PATH, text, {"tags": ["t"]}, 1, spans)


def expected_line(note: ResolvedNote, offset: int) -> int:
    for span in note.spans:
        if span.start <= offset < span.end:
            if span.origin == PATH:
                return span.origin_line + note.text.count("\n", span.start, offset)
            return span.host_line
    raise AssertionError("offset outside every span")


@_settings(50)
@given(with_embeds(), options())
def test_embedded_text_is_attributed_to_its_origin(note: ResolvedNote, opts: ChunkOptions) -> None:
    chunks = chunk_note(note, opts)
    check_chunks(note, chunks, opts)
    text = note.text
    for chunk in chunks:
        start, end = chunk.extra["char_start"], chunk.extra["char_end"]
        writers = {
            s.origin for s in note.spans if text[max(s.start, start) : min(s.end, end)].strip()
        }
        assert chunk.origins == tuple(sorted(writers))
        assert chunk.origin == (chunk.origins[0] if len(writers) == 1 else PATH)
        assert chunk.line_start == expected_line(note, start)
        assert chunk.line_end == max(chunk.line_start, expected_line(note, end - 1))


@_settings(60)
@given(st.lists(st.one_of(INLINE, CJK_SENTENCE), min_size=1, max_size=30), options())
def test_prose_chunks_respect_target_max(lines: list[str], opts: ChunkOptions) -> None:
    """Single-line prose (no code, no heading glue) never exceeds target_max, in the options'
    own measure (size units or tokens), except for the overlap repeated from the piece before."""
    measure = opts.measure()
    for chunk in chunk_note(own_note(" ".join(lines)), opts):
        if not chunk.has_code and "\n" not in chunk.text:
            overlap = measure(chunk.text[: chunk.extra["overlap"]])
            assert measure(chunk.text) <= opts.target_max + overlap
