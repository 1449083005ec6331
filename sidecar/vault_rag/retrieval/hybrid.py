"""Hybrid search over one vault's index.

Dense similarity (Chroma) and BM25 (CJK-aware) each rank candidates; reciprocal rank fusion
combines the ranks, which needs no calibration between the two score scales (the bundled
model's cosine scores are compressed into a narrow band). Chunks that are not embedded yet
still compete through BM25, so a vault is searchable while its first index fills.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from vault_rag.chunking.types import Chunk
from vault_rag.index.vault_index import VaultIndex


@dataclass
class SearchResult:
    note_path: str  # the note holding this chunk (the origin's own chunk when both matched)
    heading_path: str
    anchor: str
    chunk_id: str
    score: float  # fused RRF score (only comparable within one result list)
    text: str
    origin: str  # note the text was written in
    line_start: int
    line_end: int
    embedded_in: list[str] = field(default_factory=list)  # other notes showing this same text
    dense_score: float | None = None  # cosine similarity, when the dense side found it
    lexical_score: float | None = None  # BM25 score, when the lexical side found it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SearchOptions:
    k: int = 10
    per_note_cap: int = 2
    rrf_k: int = 10  # measured on the sample question set: 10 beats the textbook 60 (short lists)
    candidates: int = 50  # per retriever, before fusion
    folder: str | None = None  # note path prefix, e.g. "Rendering/"
    tag: str | None = None


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

    dense: list[tuple[str, float]] = []
    if index.store.count():
        vector = index.provider.embed_query(query)
        dense = index.store.search(vector, depth, sorted(allowed) if allowed is not None else None)
    lexical = index.lexical.search(query, depth, folder=opts.folder, tag=opts.tag)

    fused: dict[str, float] = defaultdict(float)
    for ranking in (dense, lexical):
        for rank, (chunk_id, _) in enumerate(ranking):
            fused[chunk_id] += 1.0 / (opts.rrf_k + rank + 1)
    dense_scores, lexical_scores = dict(dense), dict(lexical)
    order = sorted(fused, key=lambda i: (-fused[i], i))
    chunks = index.manifest.chunks(order)

    results: list[SearchResult] = []
    by_text: dict[str, SearchResult] = {}
    per_note: dict[str, int] = defaultdict(int)
    for chunk_id in order:
        chunk = chunks.get(chunk_id)
        if chunk is None or (allowed is not None and chunk.note_path not in allowed):
            continue  # stale projection entry; reconcile removes it
        # The same embedded text shows up in the note that wrote it and in every note that
        # embeds it: return it once, attributed to its origin, listing the embedders.
        key = _text_key(chunk)
        if key in by_text:
            _merge(by_text[key], chunk)
            continue
        if per_note[chunk.note_path] >= opts.per_note_cap:
            continue
        result = _result(chunk, fused[chunk_id], dense_scores, lexical_scores)
        by_text[key] = result
        per_note[chunk.note_path] += 1
        results.append(result)
        if len(results) >= opts.k:
            break
    return results


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


def _text_key(chunk: Chunk) -> str:
    return hashlib.sha256(" ".join(chunk.text.split()).encode()).hexdigest()


def _result(
    chunk: Chunk, score: float, dense: dict[str, float], lexical: dict[str, float]
) -> SearchResult:
    return SearchResult(
        note_path=chunk.note_path,
        heading_path=chunk.hierarchy_path,
        anchor=chunk.anchor,
        chunk_id=chunk.id,
        score=round(score, 6),
        text=chunk.text,
        origin=chunk.origin,
        line_start=chunk.line_start,
        line_end=chunk.line_end,
        dense_score=dense.get(chunk.id),
        lexical_score=lexical.get(chunk.id),
    )


def _merge(kept: SearchResult, duplicate: Chunk) -> None:
    """Fold a chunk with the same text into `kept`. When the duplicate is the origin note's own
    chunk, cite the origin (its heading and lines) and list the embedder instead."""
    if duplicate.note_path == kept.note_path:
        return
    if duplicate.note_path == duplicate.origin and kept.note_path != kept.origin:
        embedder = kept.note_path
        kept.note_path = duplicate.note_path
        kept.heading_path = duplicate.hierarchy_path
        kept.anchor = duplicate.anchor
        kept.chunk_id = duplicate.id
        kept.line_start, kept.line_end = duplicate.line_start, duplicate.line_end
        duplicate_path = embedder
    else:
        duplicate_path = duplicate.note_path
    if duplicate_path not in kept.embedded_in:
        kept.embedded_in.append(duplicate_path)
