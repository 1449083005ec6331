"""What the index holds (`GET /v1/status` reports it with the server's own state; MCP
`vault_status` reports this)."""

from __future__ import annotations

from typing import Any

from vault_rag.services.parts import VaultParts


def index_summary(parts: VaultParts) -> dict[str, Any]:
    index = parts.index
    counts = index.manifest.counts()
    return {
        "vault": str(index.vault_root),
        "notes": counts["notes"],
        "chunks": counts["chunks"],
        "embedded": counts["embedded"],
        "pending": counts["pending"],
        "warnings": counts["warnings"],
        "embedding_model": index.provider.model_id,
        "index_model": index.model_id,
        "vector_store": index.store_info.kind,
        "vector_store_reachable": index.store_error is None,
        "last_run": index.manifest.get_meta("last_run"),
        "excluded_folders": len(parts.exclusions.patterns()),
    }
