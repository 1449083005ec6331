"""Incremental indexing: scan → plan → chunk (BM25-searchable at once) → embed (dense joins later).

Crash safety comes from ordering, not from a distributed transaction:
1. the lexical index is written before the manifest, the vector store before a chunk is marked
   embedded, so the manifest never claims what the projections lack;
2. ids made stale by a change are deleted from the projections only after the manifest commit;
3. `reconcile` (at the start of every run) deletes projection entries the manifest does not know
   and re-queues chunks the store lost. A `kill -9` at any point is finished by the next run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.chunking.pipeline import (
    KIND_VERSIONS_META,
    encode_kind_versions,
    kind_versions,
    pipeline_signature,
    stale_kinds,
)
from vault_rag.chunking.pipeline import chunk_options as default_chunk_options
from vault_rag.chunking.types import Chunk
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.index.lock import WriterLock
from vault_rag.index.manifest import POSTED_PREFIX, NoteRecord
from vault_rag.index.note_file import read_note_file
from vault_rag.index.snapshot_build import refresh_snapshot
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.updates.dependencies import dependents_of, note_dependencies
from vault_rag.index.updates.records import IndexSummary, Progress, ScanResult
from vault_rag.index.updates.sections import backfill as backfill_sections
from vault_rag.index.updates.unit_vectors import embed_units
from vault_rag.index.vault_index import VaultIndex
from vault_rag.sources.markdown import MarkdownKind
from vault_rag.sources.registry import SourceRegistry, source_registry
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.listing import Skip, VaultListing
from vault_rag.vault.paths import UnsafePathError
from vault_rag.vault.reader import DEFAULT_IGNORES, is_ignored
from vault_rag.vault.types import ResolvedNote

log = logging.getLogger(__name__)


def _some(paths: list[str], n: int = 5) -> str:
    more = f" and {len(paths) - n} more" if len(paths) > n else ""
    return ", ".join(paths[:n]) + more


class Indexer:
    def __init__(
        self,
        index: VaultIndex,
        *,
        ignores: Iterable[str] = DEFAULT_IGNORES,
        chunk_options: ChunkOptions | None = None,
        batch_size: int = 32,
        sources: SourceRegistry | None = None,
        skip_path: Callable[[str, bool], str | None] | None = None,
        sections: bool = True,
    ) -> None:
        self.index = index
        # Embed each section of a merged unit too, after the units, for citations (`cite_spans`;
        # +20-29% model time on the shared vaults, docs/retrieval.md); off: by words alone.
        self.sections = sections
        self.skip_path = skip_path  # a source's own rules (`VaultListing.skip`)
        self.ignores = tuple(ignores)
        # The kinds of file indexed (`sources/registry.py`); default: every known kind.
        self.sources = sources or source_registry()
        # Default: the units the product ships (settings' defaults, in the model's tokens).
        self.chunk_options = chunk_options or default_chunk_options(None, index.provider)
        self.batch_size = batch_size
        self.lock = WriterLock(index.data_dir)
        self.store_synced = False  # the store-side reconcile has run since this object began
        self.store_marked = False  # ... or was skipped: the manifest's sync marker still held

    # -- the whole run --------------------------------------------------------------------
    def run(self, progress: Progress | None = None, embed_limit: int | None = None) -> IndexSummary:
        progress = progress or Progress()
        started = time.monotonic()
        with self.lock:
            self.index.check_model()
            self.index.claim_model()
            self.reconcile()
            signature = pipeline_signature(self.chunk_options)
            scan = self.scan(
                force=self.index.manifest.get_meta("pipeline") != signature,
                force_kinds=self.stale_kinds(),
            )
            summary = IndexSummary(
                deleted_why=scan.deleted_why(),
                notes_seen=len(scan.seen),
                notes_changed=len(scan.changed),
                notes_deleted=len(scan.deleted) - len(scan.renamed),
                notes_renamed=len(scan.renamed),
            )
            for record in scan.touched:
                self.index.manifest.touch_note(record)
            summary.notes_reindexed = self.apply(scan, progress)
            # Chunked with this pipeline: recorded now, so a run that stops while embedding
            # (store down, Ctrl-C) does not re-chunk every note next time.
            self.index.manifest.set_meta("pipeline", signature)
            self.record_kind_versions()
            # A manifest from before scripts were counted (cross-language search) gets them.
            self.index.manifest.backfill_scripts()
            embedded, reused = self.embed_pending(progress, limit=embed_limit)
            summary.chunks_embedded, summary.chunks_reused = embedded, reused
            counts = self.index.manifest.counts()  # (sections change none of these)
            if embed_limit is None and not counts["pending"]:
                self.embed_sections(progress)
            summary.chunks_pending = counts["pending"]
            summary.warnings = counts["warnings"]
            changed = summary.notes_reindexed or summary.notes_deleted or embedded or reused
            if not summary.chunks_pending and (changed or self._vectors_left_over(counts)):
                # (a no-op run skips it: ~0.9 s at 72k units; leftovers of an interrupted
                # run are caught by the count check)
                self.index.manifest.prune_vectors()
            # The BM25 state saved for the next process (a first search then loads it instead
            # of building from every row); nothing to do when the saved one is current.
            self.index.lexical.persist()
            if self.store_synced and (changed or not self.store_marked):
                self.index.mark_store_in_sync()  # the next run with nothing to do skips it
            # For the next process that only searches; nothing to do when current.
            refresh_snapshot(self.index)
        summary.seconds = time.monotonic() - started
        self.index.manifest.set_meta("last_run", summary.line())
        return summary

    def _vectors_left_over(self, counts: dict[str, int]) -> bool:
        cached = self.index.manifest.db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        return int(cached) > counts["chunks"]

    # -- 1. make the projections agree with the manifest -------------------------------------
    def reconcile(self) -> None:
        manifest, lexical = self.index.manifest, self.index.lexical
        known = manifest.chunk_ids()
        lexical_ids = lexical.ids()
        lexical.delete(sorted(lexical_ids - known))
        missing = known - lexical_ids
        if missing:
            lexical.upsert(_lexical_items(manifest.chunks(missing).values()))
        if not self._store_still_in_sync(known):
            self.store_marked = False
            self.reconcile_store()

    def _store_still_in_sync(self, known: set[str] | None = None) -> bool:
        """Unchanged since a run found store and manifest in agreement: no need to read every
        id back (at 72k units ~0.8 s, plus opening Chroma when nothing else needs it)."""
        if not self.index.store_in_sync(known):
            return False
        self.store_synced, self.index.store_error = True, None
        self.store_marked = True
        return True

    def reconcile_store(self) -> bool:
        """The vector-store half of `reconcile`. A store that cannot be reached is left for
        later (`embed_pending` retries first): chunking and BM25 go on without it."""
        manifest, store = self.index.manifest, self.index.store
        try:
            known = manifest.chunk_ids()
            stored = store.ids()
            store.delete(sorted(stored - known))
        except StoreUnavailableError as exc:
            self._store_down(exc)
            return False
        lost = manifest.embedded_ids() - stored
        if lost:
            manifest.mark_embedded(lost, embedded=False)
        self.store_synced, self.index.store_error = True, None
        return True

    def _store_down(self, exc: StoreUnavailableError) -> None:
        log.warning("vector store: %s", exc)
        self.store_synced, self.index.store_error = False, str(exc)

    # -- 2. what changed on disk ---------------------------------------------------------
    def stale_kinds(self) -> frozenset[str]:
        """The enabled kinds whose own chunker version differs from the one the index's files
        of that kind were cut with (`chunking/pipeline.py`, `kind_versions`)."""
        recorded = self.index.manifest.get_meta(KIND_VERSIONS_META)
        return stale_kinds(recorded, kind_versions(self.sources.kinds))

    def record_kind_versions(self) -> None:
        current = encode_kind_versions(kind_versions(self.sources.kinds))
        if self.index.manifest.get_meta(KIND_VERSIONS_META) != current:
            self.index.manifest.set_meta(KIND_VERSIONS_META, current)

    def scan(
        self,
        force: bool = False,
        paths: list[str] | None = None,
        force_kinds: frozenset[str] = frozenset(),
    ) -> ScanResult:
        """Stat every note; `force` (the chunking pipeline changed) treats every note as changed,
        `force_kinds` (a kind's own chunker changed) every file of those kinds.
        `paths`: the vault's note paths when the caller has just listed them."""
        root = self.index.vault_root
        known = self.index.manifest.notes()
        if paths is None:
            listing = VaultListing(root, self.ignores, self.sources.suffixes, self.skip_path)
            paths = listing.paths()
            self.note_skipped(listing.skipped)
        seen = paths
        result = ScanResult(seen=seen)
        for rel in result.seen:
            try:
                file = read_note_file(root, rel, known.get(rel), walked=True)
            except (OSError, UnsafePathError):
                continue  # vanished or still being written: the next run looks again
            forced = force or self.sources.kind_name(rel) in force_kinds
            if file.same and not forced:
                if file.record is not known.get(rel):
                    result.touched.append(file.record)
            else:
                result.changed[rel] = file.record
        present = set(result.seen)
        result.deleted = sorted(p for p in known if p not in present)
        result.detect_renames(known)
        self._explain_deleted(result, known)
        return result

    def note_skipped(self, skipped: dict[str, Skip]) -> None:
        """Record the files a listing left out, when they differ from those recorded (a
        warning in the log for each new one; every other note is indexed)."""
        manifest = self.index.manifest
        wanted = {path: (skip.code, skip.why) for path, skip in skipped.items()}
        recorded = manifest.skipped_files()
        if wanted == recorded:
            return
        for path, (code, why) in wanted.items():
            if path not in recorded:
                log.warning("skipped %r (%s): %s", path, code, why)
        manifest.replace_skipped_files(wanted)

    def _explain_deleted(self, result: ScanResult, known: dict[str, NoteRecord]) -> None:
        root = self.index.vault_root
        for rel in result.deleted:
            if is_ignored(rel, self.ignores):
                result.excluded.append(rel)
            elif known[rel].file_hash.startswith(POSTED_PREFIX):
                result.posted_gone.append(rel)
        on_disk = [p for p in result.excluded if (root / p).is_file()]
        if on_disk:
            log.warning(
                "%d note(s) left the index: an excluded folder or ignore pattern covers them "
                "now (%s)",
                len(on_disk),
                _some(on_disk),
            )
        if result.posted_gone:
            log.warning(
                "%d note(s) posted while no file existed at their path left the index, the "
                "vault being the source of truth (%s); a post for a path without a file is "
                "now refused with 404 no_file",
                len(result.posted_gone),
                _some(result.posted_gone),
            )

    # -- 3. chunk and record -----------------------------------------------------------------
    def apply(
        self, scan: ScanResult, progress: Progress, note_index: NoteIndex | None = None
    ) -> int:
        """`note_index`: link resolution over `scan.seen`, when the caller keeps one."""
        manifest = self.index.manifest
        dependents = dependents_of(manifest, scan.changed, scan.deleted)
        # Before anything they embed is recorded as changed: a crash after that point must
        # still leave the embedders to re-index (their stat alone would say "unchanged").
        manifest.mark_stale(dependents)
        for path in scan.deleted:
            self._drop(manifest.delete_note(path))
        todo = sorted(set(scan.changed) | dependents)
        # Directly changed notes first: they are what the user is looking at.
        todo.sort(key=lambda p: p not in scan.changed)
        progress.on_phase("chunking", len(todo))
        note_index = note_index or NoteIndex(scan.seen)
        for rel in todo:
            record = scan.changed.get(rel)
            if record is None:
                try:  # an embedder: its own bytes did not change, record its real stat
                    record = read_note_file(self.index.vault_root, rel).record
                except (OSError, UnsafePathError):
                    continue  # gone or being written: stays stale for the next batch or scan
            self.index_note(rel, record, note_index, priority=int(rel in scan.changed))
            progress.on_advance(1)
        return len(todo)

    def reindex_dependents(
        self, changed: Iterable[str], note_index: NoteIndex, skip: Iterable[str] = ()
    ) -> None:
        """Re-resolve from disk the notes that embed `changed` notes recorded outside `apply`
        (posted notes); the caller marked them stale before recording the change."""
        for rel in sorted(dependents_of(self.index.manifest, changed, []) - set(skip)):
            try:
                record = read_note_file(self.index.vault_root, rel).record
            except (OSError, UnsafePathError):
                continue  # stays stale: the next disk batch or start-up scan re-reads it
            self.index_note(rel, record, note_index, priority=0)

    def index_note(
        self, rel: str, record: NoteRecord, note_index: NoteIndex, priority: int
    ) -> None:
        kind = self.sources.kind_for(rel) or MarkdownKind()
        result = kind.units(self.index.vault_root, rel, note_index, self.chunk_options)
        self.record_note(result.note, result.chunks, record, note_index, priority)

    def record_note(
        self,
        note: ResolvedNote,
        chunks: list[Chunk],
        record: NoteRecord,
        note_index: NoteIndex,
        priority: int = 0,
    ) -> None:
        """Store one resolved note's chunks: read from disk here, or posted by the plugin
        (`index/updates/sync.py`, already resolved with Obsidian's metadata)."""
        deps, warnings = note_dependencies(note, note_index)
        self.index.lexical.upsert(_lexical_items(chunks))
        gone = self.index.manifest.replace_note(record, chunks, deps, warnings, priority)
        self._drop(gone)

    def _drop(self, ids: list[str]) -> None:
        if ids:
            self.index.lexical.delete(ids)
            try:
                self.index.store.delete(ids)
            except StoreUnavailableError as exc:
                # The manifest no longer has them (search skips them); the store-side
                # reconcile deletes them once the store answers again.
                self._store_down(exc)

    # -- 4. vectors ------------------------------------------------------------------------
    def embed_pending(self, progress: Progress, limit: int | None = None) -> tuple[int, int]:
        """Give every pending chunk (up to `limit`) a vector (`unit_vectors.embed_units`).
        Returns (embedded by the model, reused)."""
        manifest, provider, store = self.index.manifest, self.index.provider, self.index.store
        # (The sidecar's writer may get here before its start-up reconcile: the marker first.)
        if not self.store_synced and not (self._store_still_in_sync() or self.reconcile_store()):
            raise StoreUnavailableError(self.index.store_error or "the vector store is down")
        try:
            return embed_units(manifest, provider, store, self.batch_size, progress, limit)
        except StoreUnavailableError as exc:
            self._store_down(exc)
            raise

    def embed_sections(self, progress: Progress) -> None:
        """The sections of merged units, called once every unit has its vector: they only
        refine citations, so the search is whole first. A model error is logged, not raised:
        the units are in, citations go by words until the next run (or the writer) adds them."""
        if not self.sections:
            return
        try:
            backfill_sections(self.index.manifest, self.index.provider, self.batch_size, progress)
        except EmbeddingError as exc:
            log.warning("sections not embedded (citations go by words until then): %s", exc)


def _lexical_items(chunks: Iterable[Chunk]) -> list[tuple[str, str, dict[str, object]]]:
    return [(c.id, c.embed_text, {"note_path": c.note_path, "tags": list(c.tags)}) for c in chunks]
