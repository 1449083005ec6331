"""Answers never fetch remote content by themselves.

An answer is markdown that the plugin renders. A remote image in it (`![x](https://…)`,
`<img src="https://…">`) would be fetched the moment the answer is shown, so a prompt-injected
web page could make an answer send the user's data to any URL (`https://evil/?q=<secret>`).
Every remote image (and inline frame, audio, video…) is turned into a plain link the user may
click or not; images from the vault (`![[x.png]]`, relative paths) are left alone.

This is done by parsing, not by pattern (issue 31, defect 4; `markdown_scan.py` finds what would
load): a remote image's `!` is escaped (`\\![alt](url)` shows "!" and a link), a loading HTML
tag becomes a link `[alt](url)` (its closing tag goes too), every reference-style image is
escaped, and the text is parsed again, a few rounds. A block that still loads something after
that has every `![` and `<` in it escaped, so the result never holds a remote image. A text
with nothing remote in it is returned unchanged, byte for byte.

`neutralize` rewrites a whole text; `StreamNeutralizer` does the same for text arriving in
pieces (SSE deltas), holding back only an unfinished construct until it is settled.
"""

from __future__ import annotations

import re

from vault_rag.graph.markdown_scan import Hazard, hazards, parse, scan_tags

ROUNDS = 4  # precise rewrites before a block is escaped whole
HOLD_LIMIT = 4000  # an unfinished construct longer than this is let through, escaped


def neutralize(text: str) -> str:
    """`text` with every remote image, frame or media element made a plain link."""
    if "!" not in text and "<" not in text:
        return text
    original = text
    # Line by line as markdown-it counts lines: it reads "\r\n" and "\r" as "\n".
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    if not hazards(text):
        return original
    for _ in range(ROUNDS):
        found = hazards(text)
        if not found:
            return text
        text = _rewrite(text, found)
    found = hazards(text)
    if found:
        text = _escape_lines(text, {h.lines for h in found})
    if hazards(text):  # cannot happen: no `![` nor `<` is left in those blocks
        text = escape_all(text)
    return text


def escape_all(text: str) -> str:
    """`text` with no `![` and no `<` left: nothing in it can load anything."""
    return text.replace("![", "&#33;[").replace("<", "&lt;")


def _line_starts(text: str) -> list[int]:
    return [0, *(i + 1 for i, c in enumerate(text) if c == "\n"), len(text), len(text)]


def _rewrite(text: str, found: list[Hazard]) -> str:
    starts = _line_starts(text)
    whole = {h.lines for h in found if h.start is None or h.end is None}
    edits: list[tuple[int, int, str]] = []
    for hazard in found:
        if hazard.lines in whole or hazard.start is None or hazard.end is None:
            continue
        edits.append((hazard.start, hazard.end, hazard.replacement))
        if hazard.closing:
            block_end = starts[min(hazard.lines[1], len(starts) - 1)]
            closing = _closing_tag(text, hazard.end, block_end, hazard.closing)
            if closing is not None:
                edits.append((*closing, ""))
    last = len(text) + 1
    for start, end, new in sorted(edits, reverse=True):
        if end <= last:  # two edits never overlap; the later one wins
            text = text[:start] + new + text[end:]
            last = start
    return _escape_lines(text, whole) if whole else text


def _closing_tag(text: str, start: int, end: int, name: str) -> tuple[int, int] | None:
    for tag, offset in scan_tags(text[start:end])[1]:
        if tag == name:
            close = text.find(">", start + offset)
            return (start + offset, close + 1) if close != -1 else None
    return None


def _escape_lines(text: str, blocks: set[tuple[int, int]]) -> str:
    lines = re.split(r"(?<=\n)", text)
    for first, last in blocks:
        for index in range(first, min(last, len(lines))):
            lines[index] = escape_all(lines[index])
    return "".join(lines)


class StreamNeutralizer:
    """`neutralize` over a stream: `feed` returns what can be shown now, `flush` the rest.

    What has been shown is never taken back, so a piece is shown only once nothing that may
    still arrive can change what it renders as (`_settled`). The text is parsed from the start
    of its last top-level block, which later text cannot reach back past.
    """

    def __init__(self) -> None:
        # True once a stream had to fall back to escaping (what it showed could not be made to
        # match `neutralize` of the whole): still safe, but no longer equal to it.
        self.fell_back = False
        self.reset()

    def reset(self) -> None:
        self._raw = ""  # the text since the last block that is settled
        self._sent = 0  # how much of `_raw` was shown
        self._shown = ""  # what was shown of `_raw`
        self._escaped = False  # a long unfinished construct was let through, escaped

    def feed(self, piece: str) -> str:
        self._raw += piece
        cut = _settled(self._raw)
        if len(self._raw) - cut > HOLD_LIMIT:
            return self._release_escaped()
        return self._show(cut)

    def flush(self) -> str:
        out = self._show(len(self._raw))
        self.reset()
        return out

    def _show(self, cut: int) -> str:
        if cut <= self._sent:
            return ""
        if self._escaped:
            out = escape_all(self._raw[self._sent : cut])
        else:
            whole = neutralize(self._raw[:cut])
            if not whole.startswith(self._shown):  # cannot be made to match: stay safe
                self._escaped = self.fell_back = True
                return self._show(cut)
            out = whole[len(self._shown) :]
        self._shown += out
        self._sent = cut
        self._rebase()
        return out

    def _release_escaped(self) -> str:
        self._escaped = self.fell_back = True
        return self._show(len(self._raw))

    def _rebase(self) -> None:
        """Drop the blocks before the last top-level one shown: they can no longer change."""
        if self._escaped or self._sent < len(self._raw):
            return
        base = _last_block_start(self._raw)
        if base > 0:
            done = neutralize(self._raw[:base])
            if self._shown.startswith(done):
                self._raw, self._shown = self._raw[base:], self._shown[len(done) :]
                self._sent -= base


def _last_block_start(text: str) -> int:
    """Offset of the last top-level block's first line (0 when there is one block)."""
    maps = [t.map for t in parse(text, True) if t.level == 0 and t.map and t.nesting >= 0]
    if len(maps) < 2:
        return 0
    first_line = maps[-1][0]
    return _line_starts(text)[first_line] if first_line > 0 else 0


_LEAVES = {"paragraph_open", "heading_open", "table_open", "html_block", "fence", "code_block"}


def _settled(text: str) -> int:
    """How much of `text` renders the same whatever follows it.

    Blocks before the last one are finished. In the last block, when it is not code and no
    blank line has closed it, everything from its first `![` or `<` (or a last `!`) is held
    back: only there can an image or a tag start, be completed, or be swallowed by a code span
    that closes later.
    """
    if "!" not in text and "<" not in text:
        return len(text)
    leaves = [t for t in parse(text, True) if t.map and t.type in _LEAVES]
    if not leaves:
        return len(text)
    first, end = leaves[-1].map or (0, 0)
    unfinished = first >= text.count("\n")  # it starts on the last line, not yet complete
    if leaves[-1].type in ("fence", "code_block") and not unfinished:
        return len(text)
    starts = _line_starts(text)
    for leaf in reversed(leaves[:-1]):
        # A block right before may run on: its end was the start of a line still being
        # written, or it is an HTML block that becomes text once escaped.
        if not leaf.map or leaf.map[1] != first or not (unfinished or leaf.type == "html_block"):
            break
        first = leaf.map[0]
    after = text[starts[min(end, len(starts) - 1)] :]
    if "\n" in after and not after.split("\n", 1)[0].strip():
        return len(text)  # a blank line closed it
    held = [text.find(mark, starts[first]) for mark in ("![", "<")]
    held += [len(text) - 1] if text.endswith("!") else []
    return min((at for at in held if at >= 0), default=len(text))
