"""Give pending units their vectors (`Indexer.embed_pending`): from the cache when the content
hash is known, else from the model; then into the vector store, with `store_metadata` beside
each. A unit is marked embedded only once the store has it (the manifest never claims what the
store lacks). The sections of merged units come after, in `sections.py`.
"""

from __future__ import annotations

import time

from vault_rag.chunking.types import Chunk
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.index.manifest import Manifest
from vault_rag.index.stores.protocol import VectorStore
from vault_rag.index.updates.records import Progress


def embed_units(
    manifest: Manifest,
    provider: EmbeddingProvider,
    store: VectorStore,
    batch_size: int,
    progress: Progress,
    limit: int | None = None,
) -> tuple[int, int]:
    """Embed up to `limit` pending units, `batch_size` a model call. Returns (embedded by the
    model, reused). A store that cannot be reached raises `StoreUnavailableError`: the vectors
    are cached by content hash and the units stay pending, so nothing is lost and the next
    attempt re-sends them without calling the model."""
    total = manifest.counts()["pending"]
    if limit is not None:
        total = min(total, limit)
    progress.on_phase("embedding", total)
    embedded = reused = done = 0
    started = time.monotonic()
    while done < total:
        batch = manifest.pending(min(batch_size, total - done))
        if not batch:
            break
        vectors = manifest.cached_vectors(p.content_hash for p in batch)
        todo: dict[str, str] = {}
        for p in batch:
            if p.content_hash not in vectors:
                todo.setdefault(p.content_hash, p.chunk.embed_text)
        if todo:
            fresh = provider.embed_documents(list(todo.values()))
            new = dict(zip(todo.keys(), fresh, strict=True))
            manifest.cache_vectors(new)
            vectors.update(new)
        embedded += len(todo)
        reused += len(batch) - len(todo)
        store.upsert(
            [p.id for p in batch],
            [vectors[p.content_hash] for p in batch],
            [p.chunk.text for p in batch],
            [store_metadata(p.chunk) for p in batch],
        )
        manifest.mark_embedded(p.id for p in batch)
        done += len(batch)
        progress.on_advance(len(batch))
        if embedded:
            # Measured rate, for `vault-rag status`'s estimate of the time left.
            manifest.set_meta("embed_rate", f"{embedded / (time.monotonic() - started):.3f}")
    return embedded, reused


def store_metadata(chunk: Chunk) -> dict[str, object]:
    return {
        "note_path": chunk.note_path,
        "origin": chunk.origin,
        "anchor": chunk.anchor,
        "hierarchy_path": chunk.hierarchy_path,
        "line_start": chunk.line_start,
        "line_end": chunk.line_end,
        "tags": list(chunk.tags),
        "content_hash": chunk.content_hash,
    }
