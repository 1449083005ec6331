"""Small-to-big: the enclosing section of a chunk, bounded, as context for answers.

Retrieval matches small units (a paragraph, a short section) because a small unit's vector is
about one thing; an answer, a grader or a reader needs the surrounding section too. For each
chunk the chunker records the largest heading section around it that still fits
`ChunkOptions.context_chars`: its own section, then the section with its sub-sections, then
the parent's, and so on. When even its own section is too long, a window of whole lines of
that section centred on the chunk. The chunk's own heading, anchor and lines stay what it is
cited by; the context is only shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from vault_rag.chunking.blocks import Document, Section


@dataclass(frozen=True)
class SectionRange:
    path: tuple[str, ...]  # heading path as parsed ("" before the first heading: ())
    start: int  # character range of the section's text (heading line included)
    end: int


def section_range(doc: Document, section: Section) -> SectionRange:
    first, last = section.blocks[0].start_line, section.blocks[-1].end_line
    found = doc.char_range(first, last)
    start, end = found if found else (doc.line_starts[first], doc.line_starts[first])
    return SectionRange(section.path, start, end)


def enclosing(
    doc: Document, ranges: list[SectionRange], index: int, start: int, end: int, bound: int
) -> tuple[int, int]:
    """Character range of the context for the chunk [start, end) that begins in section
    `index`: always contains the chunk, and is at most `bound` characters long unless the
    chunk alone is longer."""
    if end - start >= bound or not ranges:
        return start, end
    own = ranges[index]
    ladder = [(own.start, own.end)]
    for depth in range(len(own.path), 0, -1):  # the section with its subtree, then upwards
        prefix = own.path[:depth]
        lo = hi = index
        while lo > 0 and ranges[lo - 1].path[:depth] == prefix:
            lo -= 1
        while hi + 1 < len(ranges) and ranges[hi + 1].path[:depth] == prefix:
            hi += 1
        ladder.append((ranges[lo].start, ranges[hi].end))
    best: tuple[int, int] | None = None
    for lo_char, hi_char in ladder:
        candidate = (min(lo_char, start), max(hi_char, end))
        if candidate[1] - candidate[0] > bound:
            break
        best = candidate
    if best is not None:
        return best
    return _window(doc, min(own.start, start), max(own.end, end), start, end, bound)


def _window(doc: Document, lo: int, hi: int, start: int, end: int, bound: int) -> tuple[int, int]:
    """Whole lines of [lo, hi) around [start, end), added alternately before and after while
    the range stays within `bound` characters (a line that does not fit ends that side)."""
    first, last = start, end
    grow_up = grow_down = True
    while grow_up or grow_down:
        if grow_up:
            line = doc.line_of(first)
            up = doc.line_starts[line] if first > doc.line_starts[line] else None
            if up is None and line > 0:
                up = doc.line_starts[line - 1]
            grow_up = up is not None and lo <= up < first and last - up <= bound
            if grow_up and up is not None:
                first = up
        if grow_down:
            line = doc.line_of(max(first, last - 1))
            down = doc.line_end(line) if last < doc.line_end(line) else None
            if down is None and line + 1 < doc.n_lines:
                down = doc.line_end(line + 1)
            # an empty line adds nothing (down == last): step past it, or stop at the end
            while down is not None and down == last and line + 2 < doc.n_lines:
                line += 1
                down = doc.line_end(line + 1)
            grow_down = down is not None and last < down <= hi and down - first <= bound
            if grow_down and down is not None:
                last = down
    text = doc.text
    while last > end and text[last - 1].isspace():
        last -= 1
    while first < start and text[first].isspace():
        first += 1
    return first, last
