"""Hybrid search over one vault's index.

Dense similarity (Chroma) and BM25 (CJK-aware) each rank candidates; reciprocal rank fusion
combines the ranks, which needs no calibration between the two score scales (the bundled
model's cosine scores are compressed into a narrow band). Chunks that are not embedded yet
still compete through BM25, so a vault is searchable while its first index fills. A third,
note-level list (each note's centroid, `index/dense/note_vectors.py`) adds a weighted RRF term to
the candidates of the notes closest to the question, and the best candidates lend part of their
score to the notes they link to (`link_signal.py`); both re-order, never add. The dense list itself
is compared with the corpus mean partly taken off (`dense.py`: hub passages demoted).

An optional feedback prior (`SearchOptions.prior`) then re-orders the fused candidates: each
score is multiplied by a factor in [1 − b, 1 + b] (b = `prior_weight`). It never adds a
candidate, and it cannot overturn a clear difference: a result whose fused score is below
(1 − b) / (1 + b) of another's stays below it whatever the feedback (b = 0.1: 0.818, so only
results within about 18 % of each other can swap).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from vault_rag.chunking.types import Chunk
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.cite import locate
from vault_rag.retrieval.code_files import rank_code_files
from vault_rag.retrieval.dense import DenseCandidates, dense_candidates
from vault_rag.retrieval.focus import NoteFocus, focus_factors, focus_ranking
from vault_rag.retrieval.graph_route import GraphRoute
from vault_rag.retrieval.link_signal import add_link_signal
from vault_rag.retrieval.rerank.base import Reranker, rerank_ids
from vault_rag.retrieval.rerank.factory import reranker_for
from vault_rag.retrieval.results import SearchResult
from vault_rag.settings import Settings, default
from vault_rag.vault.frontmatter import split_frontmatter
from vault_rag.vault.paths import UnsafePathError, resolve_inside

# chunk ids of the fused candidates → feedback signal in [-1, 1] for those that have one
PriorFn = Callable[[Sequence[str]], Mapping[str, float]]
MAX_PRIOR_WEIGHT = 0.5  # above this the prior would outweigh retrieval rather than nudge it
PROMOTED = "promoted"  # frontmatter `origin:` of an answer saved as a note
Retriever = Literal["dense", "lexical"]
log = logging.getLogger(__name__)
__all__ = ["SearchOptions", "SearchResult", "hybrid_search", "search_options", "unit_result"]


@dataclass(frozen=True)
class SearchOptions:
    """One search's knobs. Product code builds them with `search_options(settings, ...)`;
    the defaults here are the settings' defaults (written once, in `Settings`)."""

    k: int = default("top_k")
    per_note_cap: int = default("per_note_cap")
    # measured on the sample question set: 10 beats the textbook 60 (short lists)
    rrf_k: int = default("rrf_k")
    candidates: int = 50  # per retriever, before fusion
    folder: str | None = None  # note path prefix, e.g. "Rendering/"
    tag: str | None = None
    prior: PriorFn | None = None  # feedback prior (None: off; see the module doc)
    # b: the prior scales a fused score by a factor in [1-b, 1+b]
    prior_weight: float = default("feedback_max_boost")
    # w: a candidate whose note ranks r-th by centroid (index/dense/note_vectors.py) gains
    # w / (rrf_k + r); it re-orders candidates, never adds one. 0 turns it off.
    note_weight: float = default("note_weight")
    # c: dense search compares unit and query with c × the corpus mean taken off both
    # (retrieval/dense.py: demotes hub passages close to every question). 0 turns it off.
    dense_centering: float = default("dense_centering")
    # l: each of the top candidates passes l × its score, split over the notes it links to,
    # to those notes' best candidates (retrieval/link_signal.py). 0 turns it off.
    link_weight: float = default("link_weight")
    include_promoted: bool = True  # False: leave out notes saved from answers
    # Which candidate lists are fused; one side alone is for measuring (`vault-rag eval --side`)
    retrievers: tuple[Retriever, ...] = ("dense", "lexical")
    # Asking about a note: prefer it and its linked notes (retrieval/focus.py). None: off.
    focus: NoteFocus | None = None
    # Second stage (retrieval/rerank/): the top `rerank_candidates` re-scored. None: off.
    reranker: Reranker | None = None
    rerank_candidates: int = default("rerank_candidates")
    rerank_doc_chars: int = default("rerank_doc_chars")
    # Cite the section of each unit that answers (retrieval/cite.py); False: the unit's first.
    cite_spans: bool = default("cite_spans")
    # The question's embedding when the caller already has it (several collections searched
    # with the one model they share: retrieval/collections.py), so it is not embedded again.
    query_vector: tuple[float, ...] | None = None
    # A relational question's units from the code graph, fused with the merged list
    # (retrieval/graph_route.py, applied by `collections.search_collections`). None: off.
    graph_route: GraphRoute | None = None


def search_options(
    settings: Settings, *, prior: PriorFn | None = None, **overrides: Any
) -> SearchOptions:
    """The one way the CLI, the API and the answer graph build `SearchOptions`: the settings'
    retrieval values, then per-request `overrides` (None means "not given"). `prior` (the
    open `feedback.prior.FeedbackPrior`) applies only when `settings.feedback_prior` is on, so
    that one setting switches the prior for every search path at once."""
    values: dict[str, Any] = {
        "k": settings.top_k,
        "per_note_cap": settings.per_note_cap,
        "rrf_k": settings.rrf_k,
        "prior": prior if settings.feedback_prior else None,
        "prior_weight": settings.feedback_max_boost,
        "note_weight": settings.note_weight,
        "dense_centering": settings.dense_centering,
        "link_weight": settings.link_weight,
        "reranker": reranker_for(settings),
        "rerank_candidates": settings.rerank_candidates,
        "rerank_doc_chars": settings.rerank_doc_chars,
        "cite_spans": settings.cite_spans,
    }
    values.update({key: value for key, value in overrides.items() if value is not None})
    return SearchOptions(**values)


def apply_prior(
    fused: Mapping[str, float], prior: PriorFn | None, weight: float
) -> dict[str, float]:
    """The factor for each fused candidate: 1 + weight × signal, the signal clamped to [-1, 1].
    Signals for ids that are not candidates are ignored: the prior re-orders, never adds."""
    if not 0.0 <= weight <= MAX_PRIOR_WEIGHT:
        raise ValueError(f"prior_weight must be within [0, {MAX_PRIOR_WEIGHT}], not {weight}")
    factors = dict.fromkeys(fused, 1.0)
    if prior is None or not weight or not fused:
        return factors
    for chunk_id, value in prior(list(fused)).items():
        if chunk_id in factors and math.isfinite(value):
            factors[chunk_id] = 1.0 + weight * max(-1.0, min(1.0, value))
    return factors


def hybrid_search(
    index: VaultIndex, query: str, options: SearchOptions | None = None
) -> list[SearchResult]:
    opts = options or SearchOptions()
    if not query.strip():
        return []
    allowed = _allowed_note_paths(index, opts)
    if allowed is not None and not allowed:
        return []
    depth = max(opts.candidates, opts.k * 5)

    found = DenseCandidates()
    if "dense" in opts.retrievers:
        found = dense_candidates(
            index, query, depth, allowed, opts.dense_centering, opts.query_vector
        )
    dense, query_vector = found.ranking, found.vector
    lexical: list[tuple[str, float]] = []
    if "lexical" in opts.retrievers:
        lexical = index.lexical.search(query, depth, folder=opts.folder, tag=opts.tag)

    focused: list[tuple[str, float]] = []  # the query's passages within the focused notes
    if opts.focus is not None and query_vector is not None:
        focused = focus_ranking(index, query_vector, depth, opts.focus, allowed)

    fused: dict[str, float] = defaultdict(float)
    for ranking in (dense, lexical, focused):
        for rank, (chunk_id, _) in enumerate(ranking):
            fused[chunk_id] += 1.0 / (opts.rrf_k + rank + 1)
    chunks = {**found.chunks, **index.manifest.chunks([i for i in fused if i not in found.chunks])}
    if query_vector is not None and opts.note_weight > 0 and fused:
        _add_note_signal(index, fused, chunks, query_vector, depth, allowed, opts)
    if opts.link_weight > 0 and fused:  # the note-name resolver only when it is used
        add_link_signal(fused, chunks, index.note_names.current(), opts.link_weight)
    dense_scores, lexical_scores = {**dict(focused), **found.cosine}, dict(lexical)
    factors = apply_prior(fused, opts.prior, opts.prior_weight)
    # Asking about a note: a bounded factor like the prior's (retrieval/focus.py).
    focus = focus_factors(chunks, opts.focus) if opts.focus is not None else {}
    final = {i: fused[i] * factors[i] * focus.get(i, 1.0) for i in fused}
    # A code collection: definitions with the declarations that found them, tests and prose
    # after the code when close (retrieval/code_files.py); notes are never touched.
    for added in rank_code_files(index, final, chunks):
        fused.setdefault(added, 0.0)
        factors.setdefault(added, 1.0)
    order = sorted(final, key=lambda i: (-final[i], i))
    promoted: dict[str, bool] = {}
    rerank_scores: dict[str, float] = {}
    fallback: str | None = None
    if opts.reranker is not None:
        order, rerank_scores, fallback = _rerank(index, query, order, chunks, allowed, opts)

    results: list[SearchResult] = []
    by_text: dict[str, SearchResult] = {}
    per_note: dict[str, int] = defaultdict(int)
    for chunk_id in order:
        chunk = chunks.get(chunk_id)
        if chunk is None or (allowed is not None and chunk.note_path not in allowed):
            continue  # stale projection entry; reconcile removes it
        if not opts.include_promoted and _cached_is_promoted(index, chunk.note_path, promoted):
            continue
        # The same embedded text shows up in the note that wrote it and in every note that
        # embeds it: return it once, attributed to its origin, listing the embedders.
        key = _text_key(chunk)
        if key in by_text:
            kept = by_text[key]
            before = kept.note_path
            # Citing the origin instead must not push the origin past the per-note cap.
            _merge(kept, chunk, per_note[chunk.note_path] < opts.per_note_cap)
            if kept.note_path != before:
                per_note[before] -= 1
                per_note[kept.note_path] += 1
            continue
        if per_note[chunk.note_path] >= opts.per_note_cap:
            continue
        result = _result(chunk, fused[chunk_id], dense_scores, lexical_scores)
        result.score, result.prior = round(final[chunk_id], 6), factors[chunk_id]
        result.rerank_score, result.rerank_fallback = rerank_scores.get(chunk_id), fallback
        by_text[key] = result
        per_note[chunk.note_path] += 1
        results.append(result)
        if len(results) >= opts.k:
            break
    for result in results:  # after merging: a result may now cite another note
        result.promoted = _cached_is_promoted(index, result.note_path, promoted)
    if opts.cite_spans:
        pool: dict[str, list[tuple[Chunk, float]]] = defaultdict(list)
        for chunk_id in order[: opts.candidates * 2]:
            chunk = chunks.get(chunk_id)
            if chunk is not None and chunk.note_path in per_note:
                pool[chunk.note_path].append((chunk, final[chunk_id]))

        def make(chunk: Chunk) -> SearchResult:
            # a unit of the note that was no candidate: no fused score, no prior
            result = _result(chunk, fused.get(chunk.id, 0.0), dense_scores, lexical_scores)
            result.score = round(final.get(chunk.id, 0.0), 6)
            result.prior = factors.get(chunk.id, 1.0)
            result.promoted = _cached_is_promoted(index, chunk.note_path, promoted)
            result.rerank_score, result.rerank_fallback = rerank_scores.get(chunk.id), fallback
            return result

        locate(index, query, results, pool, make, query_vector)
    return results


def _rerank(
    index: VaultIndex,
    query: str,
    order: list[str],
    chunks: Mapping[str, Chunk],
    allowed: set[str] | None,
    opts: SearchOptions,
) -> tuple[list[str], dict[str, float], str | None]:
    """The re-ranking stage over the top candidates that can be shown (retrieval/rerank/):
    the new order, the re-ranker's finite scores, and the reason when the fused order stayed."""
    assert opts.reranker is not None
    texts: dict[str, str] = {}
    for chunk_id in order:
        chunk = chunks.get(chunk_id)
        if chunk is None or (allowed is not None and chunk.note_path not in allowed):
            continue
        texts[chunk_id] = chunk.embed_text[: opts.rerank_doc_chars]
        if len(texts) >= opts.rerank_candidates:
            break
    shown = [i for i in order if i in texts]
    rest = [i for i in order if i not in texts]
    new_order, scores, outcome = rerank_ids(opts.reranker, query, shown, texts, len(shown))
    if not outcome.applied:
        log.warning("re-ranking skipped: %s", outcome.error)
        return order, {}, outcome.error
    finite = {i: round(v, 6) for i, v in scores.items() if math.isfinite(v)}
    return new_order + rest, finite, None


def _add_note_signal(
    index: VaultIndex,
    fused: dict[str, float],
    chunks: Mapping[str, Chunk],
    query_vector: list[float],
    depth: int,
    allowed: set[str] | None,
    opts: SearchOptions,
) -> None:
    """Give each fused candidate its note's centroid rank as one more RRF term (weighted):
    a note that is about the question lifts its matching units; nothing new is added."""
    ranked = index.note_vectors.rank(query_vector, depth, allowed, center=opts.dense_centering)
    if not ranked:
        return
    bonus = {
        path: opts.note_weight / (opts.rrf_k + rank + 1) for rank, (path, _) in enumerate(ranked)
    }
    for chunk_id, chunk in chunks.items():
        fused[chunk_id] += bonus.get(chunk.note_path, 0.0)


def _allowed_note_paths(index: VaultIndex, opts: SearchOptions) -> set[str] | None:
    if opts.folder is None and opts.tag is None:
        return None
    paths = set(index.manifest.notes())
    if opts.folder:
        prefix = opts.folder.strip("/") + "/"
        paths = {p for p in paths if p.startswith(prefix)}
    if opts.tag:
        wanted = opts.tag.lstrip("#").casefold()
        tagged = set()
        for p in paths:
            chunks = index.manifest.note_chunks(p)
            if chunks and any(t.casefold() == wanted for t in chunks[0].tags):
                tagged.add(p)
        paths = tagged
    return paths


def _cached_is_promoted(index: VaultIndex, note_path: str, seen: dict[str, bool]) -> bool:
    if note_path not in seen:
        seen[note_path] = _is_promoted(index, note_path)
    return seen[note_path]


def _is_promoted(index: VaultIndex, note_path: str) -> bool:
    """Whether the note's frontmatter says `origin: promoted`. Chunks do not carry frontmatter
    fields, so it is read from the note, cached per indexed version of the file."""
    record = index.manifest.note(note_path)
    if record is None:
        return False
    return _frontmatter_origin(str(index.vault_root), note_path, record.file_hash) == PROMOTED


@lru_cache(maxsize=4096)
def _frontmatter_origin(vault_root: str, note_path: str, file_hash: str) -> str | None:
    """`origin:` of the note; `file_hash` only keys the cache to the indexed version. The path
    check is inside the cache too: at 10,000 notes it cost ~4 ms a result, every search."""
    try:
        path = resolve_inside(Path(vault_root), note_path)
    except UnsafePathError:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(64 * 1024)  # frontmatter sits at the top
    except OSError:
        return None
    frontmatter = split_frontmatter(head)[0]
    origin = frontmatter.get("origin")
    return str(origin).strip().casefold() if origin is not None else None


def _text_key(chunk: Chunk) -> str:
    return hashlib.sha256(" ".join(chunk.text.split()).encode()).hexdigest()


def unit_result(chunk: Chunk, score: float = 0.0) -> SearchResult:
    """A unit as a search result that no retriever scored (the graph route's hits)."""
    return _result(chunk, score, {}, {})


def _result(
    chunk: Chunk, score: float, dense: dict[str, float], lexical: dict[str, float]
) -> SearchResult:
    return SearchResult(
        note_path=chunk.note_path,
        heading_path=chunk.hierarchy_path,
        anchor=chunk.anchor,
        chunk_id=chunk.id,
        score=round(score, 6),
        base_score=round(score, 6),
        text=chunk.text,
        origin=chunk.origin,
        line_start=chunk.line_start,
        line_end=chunk.line_end,
        dense_score=dense.get(chunk.id),
        lexical_score=lexical.get(chunk.id),
        kind=str(chunk.extra.get("kind", "md")),
        page=chunk.extra.get("page"),
        page_end=chunk.extra.get("page_end"),
        symbol=str(chunk.extra["symbol"]) if chunk.extra.get("symbol") else None,
        related_file=chunk.extra.get("related_file") or None,
        declared_at=chunk.extra.get("declared_at") or None,
        url=chunk.extra.get("url") or None,
        page_title=chunk.extra.get("page_title") or None,
        **_context(chunk),
    )


def _context(chunk: Chunk) -> dict[str, Any]:
    """The chunk's recorded enclosing section (see chunking/enclosing.py); the chunk itself
    when none was recorded (an index written before small-to-big)."""
    extra = chunk.extra
    if "context_start" not in extra:
        return {
            "context": chunk.text,
            "context_line_start": chunk.line_start,
            "context_line_end": chunk.line_end,
        }
    return {
        "context": extra.get("context", chunk.text),
        "context_line_start": extra["context_line_start"],
        "context_line_end": extra["context_line_end"],
    }


def _merge(kept: SearchResult, duplicate: Chunk, may_cite_origin: bool = True) -> None:
    """Fold a chunk with the same text into `kept`. When the duplicate is the origin note's own
    chunk, cite the origin (its heading and lines) and list the embedder instead."""
    if duplicate.note_path == kept.note_path:
        return
    if (
        may_cite_origin
        and duplicate.note_path == duplicate.origin
        and kept.note_path != kept.origin
    ):
        embedder = kept.note_path
        kept.note_path = duplicate.note_path
        kept.heading_path = duplicate.hierarchy_path
        kept.anchor = duplicate.anchor
        kept.chunk_id = duplicate.id
        kept.line_start, kept.line_end = duplicate.line_start, duplicate.line_end
        for key, value in _context(duplicate).items():
            setattr(kept, key, value)
        duplicate_path = embedder
    else:
        duplicate_path = duplicate.note_path
    if duplicate_path not in kept.embedded_in:
        kept.embedded_in.append(duplicate_path)
