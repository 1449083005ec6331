"""A retrieval unit cut at the headings inside it: the places a citation can point to.

The chunker merges small sibling and child sections into one unit (up to `chunk_min` tokens)
and gives the unit the heading path of the first, so each inner section is a span here, with
the heading path, anchor and file lines it has in the note. Headings inside code fences are
not headings. Units whose text came through an `![[embed]]` (their lines map to the embed line)
stay one span: their line numbers cannot be followed inside the unit. So do units of other
kinds than Markdown (`sources/`): a `# comment` in a Python or shell file is no heading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from vault_rag.chunking.blocks import plain_title
from vault_rag.chunking.types import HIERARCHY_SEPARATOR, Chunk

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Span:
    """One section of a unit: where a citation of it points."""

    heading_path: str
    anchor: str
    title: str  # its own heading's text ("" for the unit's opening text without one)
    line_start: int
    line_end: int
    text: str
    first: bool  # the unit's own first section (where the unit's citation points)


def chunk_spans(chunk: Chunk, note_paths: Mapping[str, str]) -> list[Span]:
    """The spans of an indexed unit (`spans_of` with the chunk's own fields)."""
    return spans_of(
        chunk.text,
        chunk.hierarchy_path,
        chunk.anchor,
        chunk.line_start,
        chunk.line_end,
        mapped=chunk.origin == chunk.note_path,
        note_paths=note_paths,
        kind=str(chunk.extra.get("kind", "md")),
    )


def spans_of(
    text: str,
    heading_path: str,
    anchor: str,
    line_start: int,
    line_end: int,
    *,
    mapped: bool,
    note_paths: Mapping[str, str],
    kind: str = "md",
) -> list[Span]:
    """The unit cut at each heading inside it (outside code fences), with the heading path each
    part has in the note. `mapped`: the unit's lines are the note's own (not an embed's);
    `kind` other than "md" (code, PDF, canvas): one span;
    `note_paths` maps a heading's text to the path the chunker gave it in this note (from the
    note's other units), used when known."""
    lines = text.split("\n")
    own = Span(heading_path, anchor, anchor, line_start, line_end, text, True)
    if not mapped or kind != "md" or line_end - line_start + 1 != len(lines):
        return [own]
    path = [p for p in heading_path.split(HIERARCHY_SEPARATOR) if p] if anchor else []
    starts: list[tuple[int, int, str]] = []  # (line index, level, heading text)
    fence: str | None = None
    for number, line in enumerate(lines):
        opened = _FENCE.match(line)
        if opened:
            mark = opened.group(1)[0]
            fence = mark if fence is None else (None if mark == fence else fence)
            continue
        heading = _HEADING.match(line) if fence is None else None
        if heading:
            # the text Obsidian shows and links to, as the chunker names its sections
            starts.append((number, len(heading.group(1)), plain_title(heading.group(2))))
    if not starts or (len(starts) == 1 and starts[0][0] == 0):
        return [own]
    stack = _ancestors(path, starts)
    bounds = [s[0] for s in starts] + [len(lines)]
    spans: list[Span] = []
    if starts[0][0] > 0:  # the unit opens with text of its own section
        spans.append(_span(own, lines, 0, starts[0][0], own.heading_path, own.anchor, "", True))
    for n, (index, level, title) in enumerate(starts):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        heading_path = note_paths.get(title) or HIERARCHY_SEPARATOR.join(t for _, t in stack)
        first = index == 0
        spans.append(_span(own, lines, index, bounds[n + 1], heading_path, title, title, first))
    return spans


def _ancestors(path: list[str], starts: list[tuple[int, int, str]]) -> list[tuple[int, str]]:
    """(level, heading) of the sections enclosing the unit's first line. A unit that opens
    with a heading of its own path (the chunker may name a unit after a subsection when the
    heading it opens with has no text of its own) keeps the part of the path above that
    heading, levels counted down from the heading's; otherwise the whole path, levels 1, 2, …"""
    opening = starts[0]
    if opening[0] == 0 and opening[2] in path:
        at = len(path) - 1 - path[::-1].index(opening[2])
        return [(max(1, opening[1] - (at - i)), path[i]) for i in range(at)]
    return [(i + 1, title) for i, title in enumerate(path)]


def _span(
    own: Span,
    lines: list[str],
    start: int,
    end: int,
    heading_path: str,
    anchor: str,
    title: str,
    first: bool,
) -> Span:
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # trailing blank lines are not cited
    text = "\n".join(lines[start:end])
    return Span(
        heading_path, anchor, title, own.line_start + start, own.line_start + end - 1, text, first
    )
