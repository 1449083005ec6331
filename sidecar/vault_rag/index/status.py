"""What an index holds, read from its manifest alone (no model is loaded to answer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_rag.index.manifest import Manifest
from vault_rag.index.stores.factory import EMBEDDED_COLLECTION, EMBEDDED_DIR
from vault_rag.index.vault_index import MANIFEST_FILE

IGNORED_SHOWN = 200  # ignored files and folders listed by `vault-rag status` (all are counted)


def index_status(data_dir: Path, note: str | None = None) -> dict[str, Any]:
    path = data_dir / MANIFEST_FILE
    if not path.exists():
        return {"data_dir": str(data_dir), "indexed": False, "notes": 0, "chunks": 0}
    manifest = Manifest(path)
    try:
        counts = manifest.counts()
        rate = float(manifest.get_meta("embed_rate") or 0.0)
        info: dict[str, Any] = {
            "data_dir": str(data_dir),
            "indexed": True,
            "model_id": manifest.get_meta("model_id"),
            **counts,
            "embed_rate_per_s": round(rate, 2) if rate else None,
            "eta_seconds": round(counts["pending"] / rate) if rate and counts["pending"] else 0,
            "last_run": manifest.get_meta("last_run"),
            **bound_store(manifest, data_dir),
            "warnings": manifest.warnings(),
        }
        info["warnings_count"] = sum(w["count"] for w in info["warnings"])
        if counts["ignored"]:  # a source's rules at work (.gitignore, build folders): the first
            ignored = manifest.ignored_files()
            info["ignored_files"] = [
                {"path": path, "why": why} for path, why in list(ignored.items())[:IGNORED_SHOWN]
            ]
        if note is not None:
            info["note_state"] = note_state(manifest, note)
        return info
    finally:
        manifest.close()


def note_state(manifest: Manifest, note: str) -> dict[str, Any]:
    record = manifest.note(note)
    if record is None:
        return {"path": note, "indexed": False}
    rows = manifest.db.execute(
        "SELECT COUNT(*), COALESCE(SUM(embedded), 0) FROM chunks WHERE note_path=?", (note,)
    ).fetchone()
    return {
        "path": note,
        "indexed": True,
        "file_hash": record.file_hash,
        "chunks": rows[0],
        "embedded": rows[1],
        "pending": rows[0] - rows[1],
        "warnings": manifest.warnings(note),
    }


def bound_store(manifest: Manifest, data_dir: Path) -> dict[str, Any]:
    """The backend and collection the manifest's vectors were written to (see
    `VaultIndex.bound_store`; indexes from before the setting are embedded Chroma)."""
    kind, collection = manifest.get_meta("vector_store"), manifest.get_meta("collection")
    if not (kind and collection):
        if not manifest.counts()["embedded"]:
            return {"vector_store": None, "collection": None, "store_location": None}
        kind, collection = "chroma", EMBEDDED_COLLECTION
        return {
            "vector_store": kind,
            "collection": collection,
            "store_location": str(data_dir / EMBEDDED_DIR),
        }
    return {
        "vector_store": kind,
        "collection": collection,
        "store_location": manifest.get_meta("store_location"),
    }
