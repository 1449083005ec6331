"""Obsidian comments: `%%hidden%%` inline, or a `%%` ... `%%` pair over several lines.

Obsidian does not show them, so resolved text leaves them out (the TypeScript resolver mirrors
this in obsidian-plugin/src/resolver/comments.ts; the rule is in
shared-schemas/fixtures/embeds/README.md, case `comments-left-out`). `%%` markers pair in
reading order outside code blocks and code spans (`` `%%` `` is how notes show the syntax); a
comment may run over a code block; an unmatched `%%` stays as text (a stray `%%` must not hide
the rest of a note).
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence

_BACKTICKS = re.compile(r"`+")

# line index → [start, end) column ranges inside comments, the `%%` markers included
CommentSpans = dict[int, list[tuple[int, int]]]


def comment_spans(lines: Sequence[str], skip: Container[int] = ()) -> CommentSpans:
    """Where the comments are; lines in `skip` (code blocks) are not searched for `%%`."""
    marks: list[tuple[int, int]] = []
    for idx, line in enumerate(lines):
        if idx in skip:
            continue
        code = code_spans(line)
        col = line.find("%%")
        while col >= 0:
            if not in_comment(code, col):
                marks.append((idx, col))
            col = line.find("%%", col + 2)
    spans: CommentSpans = {}
    for (first, start), (last, end) in zip(marks[0::2], marks[1::2], strict=False):
        for idx in range(first, last + 1):
            a = start if idx == first else 0
            b = end + 2 if idx == last else len(lines[idx])
            spans.setdefault(idx, []).append((a, b))
    return spans


def code_spans(line: str) -> list[tuple[int, int]]:
    """[start, end) of the inline code spans on one line: a run of backticks up to the next run
    of the same length (unclosed runs are text)."""
    runs = [m.span() for m in _BACKTICKS.finditer(line)]
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        start, end = runs[k]
        for j in range(k + 1, len(runs)):
            if runs[j][1] - runs[j][0] == end - start:
                spans.append((start, runs[j][1]))
                k = j
                break
        k += 1
    return spans


def in_comment(spans: Sequence[tuple[int, int]] | None, col: int) -> bool:
    return any(a <= col < b for a, b in spans or ())


def cut_comments(line: str, spans: Sequence[tuple[int, int]] | None, start: int, end: int) -> str:
    """`line[start:end]` without the characters inside comments."""
    if not spans:
        return line[start:end]
    out: list[str] = []
    pos = start
    for a, b in sorted(spans):
        if b <= pos or a >= end:
            continue
        if a > pos:
            out.append(line[pos:a])
        pos = max(pos, b)
    if pos < end:
        out.append(line[pos:end])
    return "".join(out)
