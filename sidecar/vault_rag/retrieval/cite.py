"""Cite the exact place: the section of a retrieved unit that answers, not the unit's first one.

A retrieval unit often holds several small sections merged (the chunker merges sibling and
child sections up to `chunk_min` tokens) and keeps the heading path of the first, so a question
answered by the second section used to cite the first. After the search has chosen its
results, each result's unit is cut at the headings inside it (`unit_spans`), every span is
scored against the question (`SpanScorer`: the query words it holds, weighted by the lexical
index's idf, with a bonus for words of its own heading), and the citation — `heading_path`,
`anchor`, `line_start`/`line_end` and the quoted `text` — moves to the best span when it beats
the unit's own first section by a clear margin. The note, the rank and the scores stay: only
where the citation points changes, so the note-level ranking cannot move.

Within one note, the positions the search gave it are filled again (`locate`): its results
and its other candidate units compete, by fused score and span match, so a note's best
section is not shadowed by an overview unit that ranked higher as a whole (the per-note cap).
The note-level ranking is exactly the search's.

Units whose text came through an `![[embed]]` (their lines map to the embed line) are left as
they are: their line numbers cannot be followed inside the unit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vault_rag.chunking.types import HIERARCHY_SEPARATOR, Chunk
from vault_rag.index.bm25.tokenize import tokenize

if TYPE_CHECKING:
    from vault_rag.index.vault_index import VaultIndex
    from vault_rag.retrieval.results import SearchResult

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING_WEIGHT = 1.0  # a query word in the span's own heading counts this much more
MARGIN = 0.15  # a later span must beat the unit's first section by this share of the query


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


def unit_spans(result: SearchResult, note_paths: Mapping[str, str]) -> list[Span]:
    """The unit of `result` cut at each heading inside it (outside code fences), with the
    heading path each part has in the note. `note_paths` maps a heading's text to the path the
    chunker gave it in this note (from the note's other units), used when known."""
    lines = result.text.split("\n")
    own = Span(
        result.heading_path,
        result.anchor,
        result.anchor,
        result.line_start,
        result.line_end,
        result.text,
        True,
    )
    mapped = result.origin == result.note_path and (
        result.line_end - result.line_start + 1 == len(lines)
    )
    if not mapped:
        return [own]
    path = [p for p in result.heading_path.split(HIERARCHY_SEPARATOR) if p] if result.anchor else []
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
            starts.append((number, len(heading.group(1)), heading.group(2).strip()))
    if not starts or (len(starts) == 1 and starts[0][0] == 0):
        return [own]
    levels = _levels(path, starts)
    stack = list(zip(levels, path, strict=True))
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


def _levels(path: list[str], starts: list[tuple[int, int, str]]) -> list[int]:
    """Heading levels for the unit's own path: its opening heading's level for the last
    component when the unit opens with it, the levels above counted down from there."""
    if not path:
        return []
    last = starts[0][1] if starts[0][0] == 0 and starts[0][2] == path[-1] else len(path)
    return [max(1, last - (len(path) - 1 - i)) for i in range(len(path))]


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


class SpanScorer:
    """How much of the question a span holds: the idf-weighted share of the query's words
    found in its text, plus `HEADING_WEIGHT` × the share found in its own heading."""

    def __init__(self, query: str, idf: Mapping[str, float]) -> None:
        self.weights = {t: idf[t] for t in dict.fromkeys(tokenize(query)) if t in idf}
        self.total = sum(self.weights.values())

    def share(self, text: str) -> float:
        if not self.total or not text:
            return 0.0
        # A substring test, not a tokenization: tokenizing every span cost ~70 ms a search.
        low = text.casefold()
        return sum(w for t, w in self.weights.items() if t in low) / self.total

    def score(self, span: Span) -> float:
        return self.share(span.text) + HEADING_WEIGHT * self.share(span.title)


def best_span(spans: Sequence[Span], scorer: SpanScorer) -> tuple[Span, float]:
    """The span to cite and its score: the unit's first section unless another beats it by
    `MARGIN` (the fusion ranked the unit as a whole, whose citation is its first section)."""
    scored = [(scorer.score(s), s) for s in spans]
    own = next(((v, s) for v, s in scored if s.first), scored[0])
    best = max(scored, key=lambda pair: pair[0])
    return (best[1], best[0]) if best[0] > own[0] + MARGIN else (own[1], own[0])


# A note's units compete for its slots by: their best span's match (share of the query's
# words, above), plus FUSED_WEIGHT × their fused score as a share of the note's best, plus
# DENSE_WEIGHT × their cosine to the question scaled to [0, 1] among the note's units.
FUSED_WEIGHT = 1.0
DENSE_WEIGHT = 0.5


def locate(
    index: VaultIndex,
    query: str,
    results: list[SearchResult],
    pool: Mapping[str, list[tuple[Chunk, float]]] | None = None,
    make_result: Callable[[Chunk], SearchResult] | None = None,
    query_vector: Sequence[float] | None = None,
) -> None:
    """Point each result's citation at the span of a unit that answers (in place). Each note
    keeps the positions the search gave it; they are filled with its best units (its results
    and its other candidate units from `pool`, with their final scores, built by
    `make_result`), each cited at its best span, best first."""
    if not results:
        return
    scorer = SpanScorer(query, index.lexical.idf(tokenize(query)))
    slots: dict[str, list[int]] = {}
    for position, result in enumerate(results):
        slots.setdefault(result.note_path, []).append(position)
    taken = {r.chunk_id for r in results}
    for note, positions in slots.items():
        units = index.manifest.note_chunks(note)
        paths = _note_paths(units, note)
        mine = [results[p] for p in positions]
        fused_of = {r.chunk_id: r.score for r in mine}  # fused × prior × focus
        fused_of.update({c.id: f for c, f in (pool or {}).get(note, [])})
        others: list[Chunk] = []
        if make_result is not None:
            pooled = set(fused_of)
            others = [u for u in units if u.id in pooled and u.id not in taken and u.origin == note]
        candidates = mine + [make_result(u) for u in others] if make_result else mine
        if len(candidates) < 2 and not scorer.total:
            continue
        dense = _dense_shares(index, [c.chunk_id for c in candidates], query_vector)
        best_fused = max(fused_of.values(), default=0.0)
        ranked: list[tuple[float, int, SearchResult]] = []
        for n, result in enumerate(candidates):
            span, value = best_span(unit_spans(result, paths), scorer)
            if not span.first:
                _cite(result, span)
            fused = fused_of.get(result.chunk_id, 0.0)
            total = value + FUSED_WEIGHT * (fused / best_fused if best_fused else 0.0)
            total += DENSE_WEIGHT * dense.get(result.chunk_id, 0.0)
            ranked.append((total + (MARGIN if n == 0 else 0.0), n, result))
        ranked.sort(key=lambda row: (-row[0], row[1]))
        for position, (_, _, result) in zip(positions, ranked, strict=False):
            results[position] = result


def _dense_shares(
    index: VaultIndex, ids: list[str], query_vector: Sequence[float] | None
) -> dict[str, float]:
    """Each unit's cosine to the question, scaled to [0, 1] among `ids` (empty without one)."""
    if query_vector is None or len(ids) < 2:
        return {}
    vectors = index.manifest.unit_vectors(ids)
    if len(vectors) < 2:
        return {}
    query = np.asarray(query_vector, dtype=np.float32)
    query = query / (np.linalg.norm(query) or 1.0)
    cosine = {i: float(v @ query / (np.linalg.norm(v) or 1.0)) for i, v in vectors.items()}
    low, high = min(cosine.values()), max(cosine.values())
    if high - low < 1e-9:
        return {}
    return {i: (c - low) / (high - low) for i, c in cosine.items()}


def _cite(result: SearchResult, span: Span) -> None:
    result.heading_path, result.anchor = span.heading_path, span.anchor
    result.line_start, result.line_end = span.line_start, span.line_end
    result.text = span.text


def _note_paths(units: Sequence[Chunk], note_path: str) -> dict[str, str]:
    """Heading text → heading path of the note's units (the chunker's own paths)."""
    out: dict[str, str] = {}
    for chunk in units:
        if chunk.anchor and chunk.origin == note_path:
            out.setdefault(chunk.anchor, chunk.hierarchy_path)
    return out
