"""Embed the sections of units of several sections (`index/section_vectors.py`).

`backfill` runs once every unit has its vector (`Indexer.embed_sections` at the end of an index
run, the server's writer a batch per idle step): sections only refine citations, so the search
is whole first, and a saved note is searchable without waiting for them. It covers new units
and those of an index from before section vectors alike. A model error raises before anything
is written; the next run or step tries again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vault_rag.chunking.types import Chunk
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.index.manifest import Manifest
from vault_rag.index.section_vectors import section_texts
from vault_rag.index.updates.records import Progress


def embed_sections(manifest: Manifest, provider: EmbeddingProvider, chunks: Sequence[Chunk]) -> int:
    """Give the units among `chunks` that have no section row one (their sections embedded in
    one model call; a unit of one section is only recorded). Returns the sections embedded."""
    first: dict[str, Chunk] = {}
    for chunk in chunks:
        first.setdefault(chunk.content_hash, chunk)
    have = manifest.sections_present(list(first))
    todo = [(h, section_texts(c)) for h, c in first.items() if h not in have]
    if not todo:
        return 0
    flat = [text for _, texts in todo for text in texts]
    matrix = np.asarray(provider.embed_documents(flat), dtype=np.float32) if flat else None
    rows: list[tuple[str, np.ndarray | None]] = []
    at = 0
    for content_hash, texts in todo:
        part = matrix[at : at + len(texts)] if matrix is not None and texts else None
        rows.append((content_hash, part))
        at += len(texts)
    manifest.store_section_vectors(rows, {c.note_path for c in chunks})
    return len(flat)


def backfill(
    manifest: Manifest,
    provider: EmbeddingProvider,
    batch_size: int,
    progress: Progress | None = None,
    limit: int | None = None,
) -> int:
    """Embed the sections of units embedded without them, `batch_size` units a model call, up
    to `limit` units. Returns the units done."""
    total = manifest.sections_missing_count()
    if limit is not None:
        total = min(total, limit)
    if not total:
        return 0
    if progress is not None:
        progress.on_phase("sections", total)
    done = 0
    while done < total:
        chunks = manifest.sections_missing(min(batch_size, total - done))
        if not chunks:
            break
        embed_sections(manifest, provider, chunks)
        done += len(chunks)
        if progress is not None:
            progress.on_advance(len(chunks))
    return done
