"""Notes related to a note, from its stored vectors (`GET /v1/related`, MCP `related_notes`)."""

from __future__ import annotations

from dataclasses import replace

from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.retrieval.related import NoteNotFoundError, RelatedResult, related_notes
from vault_rag.services.errors import ServiceError, bad_input, not_found
from vault_rag.services.parts import VaultParts, served_path, visible


def related(
    parts: VaultParts, raw_path: str, k: int | None = None, max_k: int | None = None
) -> RelatedResult:
    """The `k` notes closest to the note (default `related_k`). `unsafe_path` / `excluded` /
    `not_found` for a bad note, `store_unavailable` (503) when the vectors cannot be read."""
    path = served_path(raw_path, parts)
    if max_k is not None and k is not None and k > max_k:
        raise bad_input(f"k must be at most {max_k}, got {k}", k=k, max_k=max_k)
    settings = parts.settings
    try:
        result = related_notes(
            parts.index, path, k or settings.related_k, settings.related_max_query_chunks
        )
    except NoteNotFoundError as exc:
        raise not_found(path) from exc
    except StoreUnavailableError as exc:  # related notes need the vectors: no BM25 fallback
        raise ServiceError(503, "store_unavailable", str(exc)) from exc
    return replace(result, related=[r for r in result.related if visible(parts, r.note_path)])
