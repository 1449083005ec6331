"""Resolved note text → top-level markdown blocks and heading sections.

Structure comes only from markdown-it-py block tokens and their `.map` line ranges, so `#` in a
fenced or indented code block, a `$$` math block or an HTML block is never taken for a heading.
Every line of the text belongs to exactly one top-level block (lines the parser consumed without
a token, such as link reference definitions, join the block before them), which is what lets the
chunker promise that no text is lost.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

# Block structure only: the core "inline" rule is off, so body text is never inline-parsed
# (faster, and immune to pathological emphasis/bracket input). Headings are parsed on demand.
_BLOCK_MD = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).disable("inline")
_INLINE_MD = MarkdownIt("commonmark").use(dollarmath_plugin)

_KINDS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "fence": "code",
    "code_block": "code",
    "math_block": "math",
    "math_block_label": "math",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "list_item_open": "item",
    "blockquote_open": "quote",
    "table_open": "table",
    "html_block": "html",
    "hr": "hr",
}
CODE_TYPES = frozenset({"fence", "code_block"})
MAX_TITLE_CHARS = 300  # a heading is a title, not a body: keeps headers and paths bounded
_WIKILINK = re.compile(r"!?\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_CALLOUT = re.compile(r"\[![\w-]+\][+-]?\s*")  # `> [!note]- Title`: the marker, not the title


@dataclass(frozen=True)
class Block:
    kind: str  # see _KINDS values, or "other"
    start_line: int  # 0-based line in the resolved text
    end_line: int  # exclusive; extends over blank/unclaimed lines up to the next block
    tok: int  # index of the opening (or only) token; -1 for text no token claimed
    close: int  # index of the matching closing token (== tok for self-contained tokens)


@dataclass
class Section:
    """A heading (absent before the first heading) and the blocks up to the next heading."""

    path: tuple[str, ...]  # heading titles from the top, empty titles left out
    anchor: str  # deepest heading on the path written in the note itself ("" if none)
    level: int = 0  # heading level 1-6; 0 before the first heading
    blocks: list[Block] = field(default_factory=list)
    has_body: bool = False  # any non-heading block


class Document:
    """The resolved text split into lines, parsed once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.n_lines = len(self.line_starts)
        # markdown-it treats a lone "\r" as a line break; ours are "\n" only. A same-length
        # stand-in keeps both line numbers and character offsets identical to `text`.
        self.tokens: list[Token] = _BLOCK_MD.parse(text.replace("\r", " "))
        self.blocks = _top_level_blocks(self.tokens, self.n_lines)
        self.code_lines = sorted(
            (t.map[0], t.map[1]) for t in self.tokens if t.type in CODE_TYPES and t.map
        )

    def line_of(self, offset: int) -> int:
        """0-based line containing character `offset`."""
        return bisect.bisect_right(self.line_starts, offset) - 1

    def line_end(self, line: int) -> int:
        """Offset just past the last character of `line` (before its newline)."""
        if line + 1 < self.n_lines:
            return self.line_starts[line + 1] - 1
        return len(self.text)

    def char_range(self, start_line: int, end_line: int) -> tuple[int, int] | None:
        """Offsets of lines [start_line, end_line) without leading/trailing blank lines."""
        first, last = start_line, min(end_line, self.n_lines) - 1
        while first <= last and self._blank(first):
            first += 1
        while last >= first and self._blank(last):
            last -= 1
        if first > last:
            return None
        return self.line_starts[first], self.line_end(last)

    def has_code(self, start: int, end: int) -> bool:
        """Whether offsets [start, end) touch a fenced or indented code block."""
        first, last = self.line_of(start), self.line_of(max(start, end - 1))
        return any(a <= last and first < b for a, b in self.code_lines)

    def children(self, block: Block) -> list[Block]:
        """Direct child blocks of a container (list, list item, blockquote), covering its lines."""
        if block.tok < 0 or block.close <= block.tok:
            return []
        level = self.tokens[block.tok].level + 1
        found: list[tuple[int, int, str]] = []
        for i in range(block.tok + 1, block.close):
            tok = self.tokens[i]
            if tok.level == level and tok.nesting >= 0 and tok.map:
                found.append((tok.map[0], i, _KINDS.get(tok.type, "other")))
        return _cover(found, self.tokens, block.start_line, block.end_line)

    def heading_title(self, block: Block) -> str:
        inline = self.tokens[block.tok + 1] if block.tok + 1 < len(self.tokens) else None
        return plain_title(inline.content if inline is not None else "")

    def _blank(self, line: int) -> bool:
        return not self.text[self.line_starts[line] : self.line_end(line)].strip()


def _closing_index(tokens: list[Token], i: int) -> int:
    if tokens[i].nesting <= 0:
        return i
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def _cover(
    found: list[tuple[int, int, str]], tokens: list[Token], start: int, end: int
) -> list[Block]:
    """Blocks from (start_line, token_index, kind), each extended to the next one's start."""
    found = sorted(f for f in found if start <= f[0] < end)
    blocks: list[Block] = []
    if found and found[0][0] > start:  # text before the first token (e.g. a reference def)
        blocks.append(Block("other", start, found[0][0], -1, -1))
    nxt = 0
    for n, (line, tok, kind) in enumerate(found):
        if blocks and line <= blocks[-1].start_line:
            continue  # defensive: never emit overlapping or empty blocks
        nxt = max(nxt, n + 1)
        while nxt < len(found) and found[nxt][0] <= line:
            nxt += 1
        stop = found[nxt][0] if nxt < len(found) else end
        blocks.append(Block(kind, line, stop, tok, _closing_index(tokens, tok)))
    if not blocks and end > start:
        blocks.append(Block("other", start, end, -1, -1))
    return blocks


def _top_level_blocks(tokens: list[Token], n_lines: int) -> list[Block]:
    found = [
        (t.map[0], i, _KINDS.get(t.type, "other"))
        for i, t in enumerate(tokens)
        if t.level == 0 and t.nesting >= 0 and t.map
    ]
    return _cover(found, tokens, 0, n_lines)


def plain_title(source: str) -> str:
    """Heading inline markdown → the plain text Obsidian shows (and links to)."""
    return " ".join(_inline_plain(source[: MAX_TITLE_CHARS * 4]).split())[:MAX_TITLE_CHARS]


def plain_text(source: str) -> str:
    """Markdown → the words a reader sees, on one line: no heading, list, quote or table marks,
    no emphasis or link syntax (wikilinks show their alias or name), code kept as it is, an
    Obsidian callout's `[!type]` marker dropped. For snippets, never for what is indexed."""
    parts: list[str] = []
    for tok in _BLOCK_MD.parse(source):
        if tok.type == "inline":
            parts.append(_inline_plain(tok.content))
        elif tok.type in ("fence", "code_block"):
            parts.append(tok.content)
    return " ".join(_CALLOUT.sub("", " ".join(parts)).split())


def _inline_plain(source: str) -> str:
    try:
        children = _INLINE_MD.parseInline(source)[0].children or []
    except Exception:  # display text is never worth failing a note for
        children = []
        parts = [source]
    else:
        parts = []
    for tok in children:
        if tok.type in ("text", "code_inline", "math_inline", "text_special"):
            parts.append(tok.content)
        elif tok.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif tok.type == "image":
            parts.extend(c.content for c in tok.children or [] if c.type == "text")
    return _WIKILINK.sub(lambda m: m.group(2) or m.group(1), "".join(parts))


def build_sections(
    doc: Document, linkable: Callable[[int], bool] = lambda _offset: True
) -> list[Section]:
    """Split the top-level blocks at headings; fold parent headings into their first child.

    A heading directly followed by its own sub-heading (`# Rendering` then `## Materials`) has
    no body: alone it would be a useless chunk of one line. Its lines join the child section,
    whose path already names it. Other heading-only sections (siblings, a table of contents
    made of headings, a trailing `## TODO`) stay sections of their own and are merged with
    their neighbours like any short section.

    Headings pulled in by an `![[embed]]` split sections and name them in `path` like any
    other, but `[[note#heading]]` can only reach headings written in the note itself:
    `linkable(offset)` says whether the heading starting at `offset` is one, and `anchor` is
    the deepest linkable heading on the path.
    """
    sections: list[Section] = [Section((), "", 0)]
    # (effective level, raw level, title, written in this note). Embedded headings nest under
    # the host heading they appear in and end with the embed: an embedded `# Title` must not
    # close the host's `## Section`, nor swallow the host text that follows the embed.
    stack: list[tuple[int, int, str, bool]] = []

    def open_section(level: int, blocks: list[Block]) -> Section:
        path = tuple(t for _, _, t, _ in stack if t)
        anchor = next((t for _, _, t, ok in reversed(stack) if ok), "")
        section = Section(path, anchor, level, blocks)
        sections.append(section)
        return section

    def close_embedded() -> int | None:
        """Pop the embedded headings on top; return the level the embed started at."""
        start = None
        while stack and not stack[-1][3]:
            start = stack.pop()[0]
        return start

    for block in doc.blocks:
        own = linkable(doc.line_starts[block.start_line])
        if block.kind == "heading" and block.tok >= 0:
            raw = int(doc.tokens[block.tok].tag[1:] or 1)
            title = doc.heading_title(block)
            if own:
                close_embedded()
                while stack and stack[-1][1] >= raw:
                    stack.pop()
                level = raw
            else:
                while stack and not stack[-1][3] and stack[-1][1] >= raw:
                    stack.pop()
                level = stack[-1][0] + 1 if stack else raw
            stack.append((level, raw, title, own))
            open_section(level, [block])
            continue
        if own and stack and not stack[-1][3]:
            # Host text again after an embedded heading: back to the host's own section.
            start = close_embedded()
            open_section(start or 1, [])
        sections[-1].blocks.append(block)
        sections[-1].has_body = True
    sections = [s for s in sections if s.blocks]
    folded: list[Section] = []
    pending: list[Block] = []
    for n, section in enumerate(sections):
        section.blocks[:0] = pending
        pending = []
        nxt = sections[n + 1].path if n + 1 < len(sections) else None
        if not section.has_body and nxt is not None and _is_descendant(nxt, section.path):
            pending = section.blocks
        else:
            folded.append(section)
    return folded


def _is_descendant(path: tuple[str, ...], ancestor: tuple[str, ...]) -> bool:
    return len(path) > len(ancestor) and path[: len(ancestor)] == ancestor
