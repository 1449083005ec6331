"""Move an index's vectors to another vector store without re-embedding (`vault-rag migrate`).

The manifest caches every chunk's vector by content hash, so the new store is filled from the
cache: no model is loaded. The run holds the index's writer lock (no indexing meanwhile),
empties the target collection first (a re-run starts clean), checks the target's count at the
end, and only then records the new backend in the manifest: a failure at any point leaves the
index bound to the old store, which is never touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vault_rag.index.lock import WriterLock
from vault_rag.index.manifest import Manifest, chunk_from_json
from vault_rag.index.stores.factory import StoreInfo, open_vector_store
from vault_rag.index.stores.protocol import VectorStore
from vault_rag.index.updates.unit_vectors import store_metadata
from vault_rag.index.vault_index import MANIFEST_FILE
from vault_rag.settings import Settings

BATCH = 256


class MigrateError(RuntimeError):
    """The migration could not be completed; the index still uses its old store."""


@dataclass
class MigrateSummary:
    target: StoreInfo
    copied: int = 0
    pending: int = 0  # chunks with no cached vector: the next `vault-rag index` embeds them
    seconds: float = 0.0

    def line(self) -> str:
        extra = f"; {self.pending} chunks left for `vault-rag index`" if self.pending else ""
        return (
            f"copied {self.copied} vectors to {self.target.describe()} in "
            f"{self.seconds:.1f} s{extra}"
        )


def migrate_index(
    settings: Settings,
    vault_root: Path,
    data_dir: Path,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
) -> MigrateSummary:
    """Copy this index's cached vectors into the store `settings` select (`vector_store`)."""
    started = time.monotonic()
    if not (data_dir / MANIFEST_FILE).exists():
        raise MigrateError(f"no index in {data_dir}: run `vault-rag index` first")
    with WriterLock(data_dir):
        manifest = Manifest(data_dir / MANIFEST_FILE)
        try:
            model_id = manifest.get_meta("model_id")
            if model_id is None:
                raise MigrateError("the index has no vectors yet: run `vault-rag index` first")
            store, info = open_vector_store(settings, vault_root, data_dir, model_id)
            try:
                summary = MigrateSummary(info)
                _copy(manifest, store, summary, on_progress)
            finally:
                close = getattr(store, "close", None)
                if close is not None:
                    close()
        finally:
            manifest.close()
    summary.seconds = time.monotonic() - started
    return summary


def _copy(
    manifest: Manifest,
    target: VectorStore,
    summary: MigrateSummary,
    on_progress: Callable[[int, int], None],
) -> None:
    dimension = manifest.get_meta("dimension")
    target.reset()  # a previous, interrupted migration may have left rows there
    rows = manifest.db.execute(
        "SELECT id, content_hash, data FROM chunks ORDER BY note_path, ordinal"
    ).fetchall()
    copied: list[str] = []
    missing: list[str] = []
    for start in range(0, len(rows), BATCH):
        part = rows[start : start + BATCH]
        vectors = manifest.cached_vectors(r[1] for r in part)
        have = [r for r in part if r[1] in vectors]
        missing.extend(r[0] for r in part if r[1] not in vectors)
        if dimension and any(len(vectors[r[1]]) != int(dimension) for r in have):
            raise MigrateError(f"a cached vector does not have the index's dimension {dimension}")
        chunks = [chunk_from_json(r[2]) for r in have]
        target.upsert(
            [r[0] for r in have],
            [vectors[r[1]] for r in have],
            [c.text for c in chunks],
            [store_metadata(c) for c in chunks],
        )
        copied.extend(r[0] for r in have)
        on_progress(start + len(part), len(rows))
    count = target.count()
    if count != len(copied):
        raise MigrateError(
            f"the target holds {count} vectors after copying {len(copied)}; the index still "
            "uses its old store (run the migration again)"
        )
    with manifest.transaction() as db:
        db.executemany("UPDATE chunks SET embedded=1 WHERE id=?", [(i,) for i in copied])
        db.executemany("UPDATE chunks SET embedded=0 WHERE id=?", [(i,) for i in missing])
        info = summary.target
        for key, value in (
            ("vector_store", info.kind),
            ("collection", info.collection),
            ("store_location", info.location),
        ):
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
    summary.copied, summary.pending = len(copied), len(missing)
