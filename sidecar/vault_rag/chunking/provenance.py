"""Where a stretch of resolved text came from: file lines and contributing notes.

Spans (see `vault.types.Span`) partition the resolved text. A span is the note's own text when
its origin is the note and it sits where it was written (`origin_line == host_line`); its lines
then count on from `origin_line`. Any other span is embedded text: it all maps to `host_line`,
the line of the `![[embed]]` that pulled it in (this also covers a note embedding one of its own
sections). Text no span covers (or a note built without spans) is treated as the note's own text
starting at `body_start_line`.
"""

from __future__ import annotations

import bisect

from vault_rag.chunking.blocks import Document
from vault_rag.vault.types import ResolvedNote, Span


class Provenance:
    def __init__(self, note: ResolvedNote, doc: Document) -> None:
        self.note = note
        self.doc = doc
        spans = sorted(
            (s for s in note.spans if 0 <= s.start < s.end <= len(note.text)),
            key=lambda s: s.start,
        )
        self.spans: list[Span] = []
        for span in spans:  # defensive: drop overlaps rather than trust them
            if not self.spans or span.start >= self.spans[-1].end:
                self.spans.append(span)
        self.starts = [s.start for s in self.spans]

    def _span_at(self, offset: int) -> Span | None:
        i = bisect.bisect_right(self.starts, offset) - 1
        if i >= 0 and offset < self.spans[i].end:
            return self.spans[i]
        return None

    def _is_own(self, span: Span) -> bool:
        return span.origin == self.note.path and span.origin_line == span.host_line

    def origin_at(self, offset: int) -> str:
        """The note that wrote the character at `offset`."""
        span = self._span_at(offset)
        return span.origin if span is not None else self.note.path

    def file_line(self, offset: int) -> int:
        """1-based line of the note's file that shows the character at `offset`."""
        line = self.doc.line_of(offset)
        span = self._span_at(offset)
        if span is None:
            return self.note.body_start_line + line
        if self._is_own(span):
            return span.origin_line + line - self.doc.line_of(span.start)
        return span.host_line

    def origins(self, start: int, end: int) -> tuple[str, tuple[str, ...]]:
        """(origin, origins) for text[start:end].

        `origins` = every note that wrote non-whitespace text in the range, sorted. `origin` is
        the single one of them when there is exactly one, else the note being chunked (it is
        the note that assembled the mixture).
        """
        text = self.note.text
        found: set[str] = set()
        pos = start
        i = max(0, bisect.bisect_right(self.starts, start) - 1)
        while pos < end:
            span = self.spans[i] if i < len(self.spans) else None
            if span is not None and span.end <= pos:
                i += 1
                continue
            if span is None or span.start > pos:  # uncovered gap: the note's own text
                stop = end if span is None else min(end, span.start)
                owner = self.note.path
            else:
                stop, owner = min(end, span.end), span.origin
            if owner not in found and text[pos:stop].strip():
                found.add(owner)
            pos = stop
        if not found:
            found.add(self.note.path)
        ordered = tuple(sorted(found))
        return (ordered[0] if len(ordered) == 1 else self.note.path), ordered
