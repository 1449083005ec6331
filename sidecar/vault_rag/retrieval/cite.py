"""Cite the exact place: the section of a retrieved unit that answers, not the unit's first one.

A retrieval unit often holds several small sections merged (`chunking/spans.py`) and keeps the
heading path of the first, so a question answered by the second section used to cite the
first. After the search has chosen its results, each result's unit is cut at the headings
inside it, every span is scored against the question (`SpanScorer`: the query words it holds,
weighted by the lexical index's idf, with a bonus for words of its own heading), and the
citation — `heading_path`, `anchor`, `line_start`/`line_end` and the quoted `text` — moves to
the best span when it beats the unit's own first section by a clear margin.

Within one note, the positions the search gave it are filled again (`locate`): its results
and its other candidate units compete, by span match, fused score and cosine to the question,
so a note's best section is not shadowed by an overview unit that ranked higher as a whole (the
per-note cap); a span that encloses another candidate's section, or the note's opening text,
counts as an overview and loses `PARENT_PENALTY`. The note-level ranking is exactly the
search's: only which of a note's units fills its positions, and where each citation points,
change.

The notes' units, cut and folded, and their vectors come from a cache kept per note
(`retrieval/cite_cache.py`), so a warm search reads nothing from the manifest here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from vault_rag.chunking.spans import Span, spans_of
from vault_rag.chunking.types import Chunk
from vault_rag.index.bm25.tokenize import tokenize
from vault_rag.retrieval.cite_cache import NoteEntry, NoteUnit, NoteUnitsCache, cache_for

if TYPE_CHECKING:
    from vault_rag.index.vault_index import VaultIndex
    from vault_rag.retrieval.results import SearchResult

__all__ = ["MARGIN", "Span", "SpanScorer", "best_span", "locate", "unit_spans"]

HEADING_WEIGHT = 1.0  # a query word in the span's own heading counts this much more
MARGIN = 0.15  # a later span must beat the unit's first section by this share of the query
# A note's units compete for its slots by: their best span's match (share of the query's
# words, above), plus FUSED_WEIGHT × their fused score as a share of the note's best, plus
# DENSE_WEIGHT × their cosine to the question scaled to [0, 1] among the note's units.
FUSED_WEIGHT = 1.0
DENSE_WEIGHT = 0.5
FIRST_BONUS = MARGIN  # the search's own first unit of the note keeps this lead
# An overview loses this much: a span whose section encloses another candidate's, or the
# note's opening text when others have headings (measured: help-en heading MRR +.014, sample
# level; the note's "what is X" intro otherwise shadows the section that says how).
PARENT_PENALTY = 0.5
# Inside a unit of several sections, each section's own cosine to the question (its text
# embedded at index time, `index/section_vectors.py`) adds SPAN_WEIGHT × (cosine − the lowest
# section's) to its match: word matching alone misses paraphrased questions. Measured at 3.0
# (docs/retrieval.md): heading MRR sample +.009, help-zh +.026, ue-notes +.016, help-en ±0;
# 1.0 changed nothing, 6.0 lost on sample.
SPAN_WEIGHT = 3.0


def unit_spans(result: SearchResult, note_paths: Mapping[str, str]) -> list[Span]:
    """The spans of a search result's unit (see `chunking/spans.py`)."""
    return spans_of(
        result.text,
        result.heading_path,
        result.anchor,
        result.line_start,
        result.line_end,
        mapped=result.origin == result.note_path,
        note_paths=note_paths,
        kind=result.kind,
    )


class SpanScorer:
    """How much of the question a span holds: the idf-weighted share of the query's words
    found in its text, plus `HEADING_WEIGHT` × the share found in its own heading."""

    def __init__(self, query: str, idf: Mapping[str, float]) -> None:
        self.weights = {t: idf[t] for t in dict.fromkeys(tokenize(query)) if t in idf}
        self.total = sum(self.weights.values())

    def share(self, text: str, folded: bool = False) -> float:
        if not self.total or not text:
            return 0.0
        # A substring test, not a tokenization: tokenizing every span cost ~70 ms a search.
        low = text if folded else text.casefold()
        return sum(w for t, w in self.weights.items() if t in low) / self.total

    def score(self, span: Span) -> float:
        return self.share(span.text) + HEADING_WEIGHT * self.share(span.title)

    def best(self, unit: NoteUnit, extra: Sequence[float] = ()) -> tuple[Span, float]:
        """`best_span` over a cached unit's folded text; `extra`, one per span, adds each
        span's excess over the lowest."""
        values = [
            self.share(text, True) + HEADING_WEIGHT * self.share(title, True)
            for text, title in zip(unit.folded, unit.titles, strict=True)
        ]
        if extra:
            low = min(extra)
            values = [v + e - low for v, e in zip(values, extra, strict=True)]
        return _pick(unit.spans, values)


def best_span(spans: Sequence[Span], scorer: SpanScorer) -> tuple[Span, float]:
    """The span to cite and its score: the unit's first section unless another beats it by
    `MARGIN` (the fusion ranked the unit as a whole, whose citation is its first section)."""
    return _pick(spans, [scorer.score(s) for s in spans])


def _pick(spans: Sequence[Span], values: Sequence[float]) -> tuple[Span, float]:
    own = next((n for n, s in enumerate(spans) if s.first), 0)
    best = max(range(len(spans)), key=lambda n: values[n])
    if values[best] > values[own] + MARGIN:
        return spans[best], values[best]
    return spans[own], values[own]


def locate(
    index: VaultIndex,
    query: str,
    results: list[SearchResult],
    pool: Mapping[str, list[tuple[Chunk, float]]] | None = None,
    make_result: Callable[[Chunk], SearchResult] | None = None,
    query_vector: Sequence[float] | None = None,
    cache: NoteUnitsCache | None = None,
) -> None:
    """Point each result's citation at the span of a unit that answers (in place). Each note
    keeps the positions the search gave it; they are filled with its best units (its results
    and its other candidate units from `pool`, with their final scores, built by
    `make_result`), each cited at its best span, best first."""
    if not results:
        return
    notes = cache or cache_for(index)
    scorer = SpanScorer(query, index.lexical.idf(tokenize(query)))
    query_unit = _unit_vector(query_vector)
    slots: dict[str, list[int]] = {}
    for position, result in enumerate(results):
        slots.setdefault(result.note_path, []).append(position)
    taken = {r.chunk_id for r in results}
    for note, positions in slots.items():
        entry = notes.entry(note)
        mine = [results[p] for p in positions]
        fused_of = {r.chunk_id: r.score for r in mine}  # fused × prior × focus
        others: list[str] = []
        for chunk, final in (pool or {}).get(note, []):
            fused_of.setdefault(chunk.id, final)
            unit = entry.units.get(chunk.id)
            if unit is not None and chunk.id not in taken and unit.chunk.origin == note:
                others.append(chunk.id)
        if make_result is None:
            others = []
        if len(mine) + len(others) < 2 and not scorer.total:
            continue
        ids = [r.chunk_id for r in mine] + others
        dense = _dense_shares(entry, ids, query_unit)
        best_fused = max(fused_of.values(), default=0.0)
        ranked: list[tuple[float, int, str, Span]] = []
        paths_of = [u.chunk.hierarchy_path for i in ids if (u := entry.units.get(i))]
        for n, chunk_id in enumerate(ids):
            unit = entry.units.get(chunk_id)
            if n < len(mine) and not _same_place(mine[n], unit):
                span, value = best_span(unit_spans(mine[n], {}), scorer)
            else:
                assert unit is not None
                cosines = _span_cosines(entry, chunk_id, query_unit)
                span, value = scorer.best(unit, [SPAN_WEIGHT * c for c in cosines])
            fused = fused_of.get(chunk_id, 0.0)
            total = value + FUSED_WEIGHT * (fused / best_fused if best_fused else 0.0)
            total += DENSE_WEIGHT * dense.get(chunk_id, 0.0)
            if PARENT_PENALTY and _encloses(span, paths_of):
                total -= PARENT_PENALTY
            ranked.append((total + (FIRST_BONUS if n == 0 else 0.0), n, chunk_id, span))
        ranked.sort(key=lambda row: (-row[0], row[1]))
        for position, (_, n, chunk_id, span) in zip(positions, ranked, strict=False):
            if n < len(mine):
                result = mine[n]
            else:
                assert make_result is not None
                result = make_result(entry.units[chunk_id].chunk)
            if not span.first:
                _cite(result, span)
            results[position] = result


def _span_cosines(entry: NoteEntry, chunk_id: str, query: np.ndarray | None) -> list[float]:
    """Each section's cosine to the question, for a unit of several sections (else empty)."""
    if not SPAN_WEIGHT or query is None or len(entry.units[chunk_id].spans) < 2:
        return []
    vectors = entry.span_vectors.get(chunk_id)
    if vectors is None or vectors.shape[1] != query.shape[0]:
        return []
    return [float(x) for x in vectors @ query]


def _encloses(span: Span, paths: Sequence[str]) -> bool:
    """The span's section is an overview: another candidate lies in one of its subsections
    (or the span is the note's opening text, before any heading, and others have headings)."""
    if not span.anchor:
        return any(p for p in paths)
    prefix = span.heading_path + " > "
    return any(p.startswith(prefix) for p in paths)


def _same_place(result: SearchResult, unit: NoteUnit | None) -> bool:
    """The result still cites its unit as indexed (not re-attributed by an embed merge)."""
    if unit is None:
        return False
    chunk = unit.chunk
    return (
        chunk.note_path == result.note_path
        and chunk.line_start == result.line_start
        and chunk.line_end == result.line_end
        and chunk.text == result.text
    )


def _unit_vector(vector: Sequence[float] | None) -> np.ndarray | None:
    if vector is None:
        return None
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else None


def _dense_shares(entry: NoteEntry, ids: list[str], query: np.ndarray | None) -> dict[str, float]:
    """Each unit's cosine to the question, scaled to [0, 1] among `ids` (empty without one)."""
    if query is None or len(ids) < 2:
        return {}
    cosine = {
        i: float(entry.vectors[i] @ query)
        for i in ids
        if i in entry.vectors and entry.vectors[i].shape == query.shape
    }
    if len(cosine) < 2:
        return {}
    low, high = min(cosine.values()), max(cosine.values())
    if high - low < 1e-9:
        return {}
    return {i: (c - low) / (high - low) for i, c in cosine.items()}


def _cite(result: SearchResult, span: Span) -> None:
    result.heading_path, result.anchor = span.heading_path, span.anchor
    result.line_start, result.line_end = span.line_start, span.line_end
    result.text = span.text
