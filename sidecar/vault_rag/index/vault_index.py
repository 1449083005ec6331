"""One vault's index, opened as a whole: manifest + vector store + lexical index + provider.

The model id is stored with the index; opening it with another model is refused until
`vault-rag index --rebuild`, so vectors of two models never mix.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.index.bm25.lexical import LexicalIndex
from vault_rag.index.dense.note_vectors import NoteVectors
from vault_rag.index.dense.snapshot import SNAPSHOT_FILE, DenseSnapshot
from vault_rag.index.manifest import Manifest
from vault_rag.index.note_names import NoteNames
from vault_rag.index.stores.factory import (
    EMBEDDED_COLLECTION,
    EMBEDDED_DIR,
    StoreInfo,
    embedded_chroma,
)
from vault_rag.index.stores.protocol import VectorStore
from vault_rag.storage.private_files import private_dir

MANIFEST_FILE = "manifest.sqlite3"
LEXICAL_DIR = "lexical"
# Manifest meta: the state in which an indexing run last found the vector store and the
# manifest in agreement (`VaultIndex.mark_store_in_sync`).
STORE_SYNC_KEY = "store_in_sync"


class ModelMismatchError(RuntimeError):
    """The index was built with another embedding model."""


class StoreMismatchError(ModelMismatchError):
    """The configured vector store is not the one the manifest's vectors were written to.
    A kind of model mismatch (the vectors the manifest counts on are not there), so every
    caller that reports one reports the other."""


class VaultIndex:
    def __init__(
        self,
        vault_root: Path,
        data_dir: Path,
        provider: EmbeddingProvider,
        store: VectorStore | None = None,
        store_info: StoreInfo | None = None,
    ) -> None:
        self.vault_root = vault_root.resolve()
        self.data_dir = data_dir
        self.provider = provider
        private_dir(data_dir)  # 0700 (files 0600): the index holds the notes' text
        self.manifest = Manifest(data_dir / MANIFEST_FILE)
        self.store: VectorStore = store if store is not None else embedded_chroma(data_dir)
        self.store_info = store_info or StoreInfo(
            "chroma", EMBEDDED_COLLECTION, str(data_dir / EMBEDDED_DIR)
        )
        # The last "cannot reach the store" message (None: fine). Search falls back to BM25 and
        # the writer retries meanwhile; `/v1/status` shows it.
        self.store_error: str | None = None
        self.lexical = LexicalIndex(data_dir / LEXICAL_DIR)
        # Derived from the manifest on demand, kept in step by its change token:
        self.note_vectors = NoteVectors(self.manifest, self.current_snapshot)  # centroids, mean
        self.note_names = NoteNames(self.manifest)  # the notes, for resolving links
        # (manifest change token, its part of the store-sync marker): opening the index and
        # the indexer's reconcile both ask, and at 72k units the digest costs ~0.1 s a time
        self._manifest_marker: tuple[tuple[int, int], str] | None = None
        self._snapshot: DenseSnapshot | None = None  # loaded once; used while current
        self._snapshot_judged: tuple[tuple[int, int], DenseSnapshot | None] | None = None

    # -- the dense snapshot (index/dense/snapshot.py) ----------------------------------------
    def current_snapshot(self) -> DenseSnapshot | None:
        """The saved dense snapshot if it is this manifest's current state, else None. Judged
        once per manifest state (its change token): every search asks."""
        token = self.manifest.change_token()
        if self._snapshot_judged is not None and self._snapshot_judged[0] == token:
            return self._snapshot_judged[1]
        if self._snapshot is None:
            self._snapshot = DenseSnapshot.load(self.data_dir / SNAPSHOT_FILE)
        snapshot = self._snapshot
        if snapshot is not None and not (
            snapshot.revision == self.manifest.revision()
            and snapshot.model_id == self.model_id
            # (a write by an older version of this program bumps no revision)
            and len(snapshot.unit_ids) == self.manifest.counts()["embedded"]
        ):
            snapshot = None
        self._snapshot_judged = (token, snapshot)
        return snapshot

    def forget_snapshot(self) -> None:
        """Load it again on next use (after it was rewritten)."""
        self._snapshot = None
        self._snapshot_judged = None

    @property
    def model_id(self) -> str | None:
        return self.manifest.get_meta("model_id")

    def check_model(self) -> None:
        """Refuse to mix vectors: the configured model must be the one the index was built with."""
        stored = self.model_id
        if stored is not None and stored != self.provider.model_id:
            raise ModelMismatchError(
                f"this index was built with embedding model {stored!r} but "
                f"{self.provider.model_id!r} is configured; run `vault-rag index --rebuild` "
                "to re-embed with the new model (or switch the setting back)"
            )
        self.check_store()

    def bound_store(self) -> tuple[str, str] | None:
        """(kind, collection) the manifest's vectors were written to; None: nothing yet.
        Indexes from before the store setting existed were embedded Chroma's `chunks`."""
        kind, collection = (
            self.manifest.get_meta("vector_store"),
            self.manifest.get_meta("collection"),
        )
        if kind and collection:
            return kind, collection
        if self.manifest.counts()["embedded"]:
            return "chroma", EMBEDDED_COLLECTION
        return None

    def check_store(self) -> None:
        """Refuse to search or index against a store that does not hold this index's vectors."""
        bound = self.bound_store()
        wanted = (self.store_info.kind, self.store_info.collection)
        if bound is not None and bound != wanted:
            raise StoreMismatchError(
                f"this index's vectors are in {bound[0]} collection {bound[1]!r}, but the "
                f"settings select {self.store_info.describe()}; run `vault-rag migrate --to "
                f"{self.store_info.kind} --vault {self.vault_root}` to copy them there (no "
                "re-embedding), or `vault-rag index --rebuild`, or switch `vector_store` back"
            )

    def claim_store(self) -> None:
        self.manifest.set_meta("vector_store", self.store_info.kind)
        self.manifest.set_meta("collection", self.store_info.collection)
        self.manifest.set_meta("store_location", self.store_info.location)

    def claim_model(self) -> None:
        if self.model_id is None:
            self.manifest.set_meta("model_id", self.provider.model_id)
            self.manifest.set_meta("dimension", str(self.provider.dimension))
        if self.bound_store() is None:
            self.claim_store()

    # -- is a store/manifest reconcile needed? ---------------------------------------------
    def store_sync_marker(self, chunk_ids: set[str] | None = None) -> str | None:
        """What must stay the same for the store to still agree with the manifest: the store
        (which one, and its files by name and size) and the manifest's chunk ids and embedded
        count. None for stores without a cheap `fingerprint` (a server may lose data at any
        time: those are always reconciled)."""
        fingerprint = getattr(self.store, "fingerprint", None)
        if fingerprint is None:
            return None
        store = self.store_info.describe()
        return f"{store}|{self._manifest_part(chunk_ids)}|{fingerprint()}"

    def _manifest_part(self, chunk_ids: set[str] | None) -> str:
        """The manifest's share of the marker, memoised on its change token (`chunk_ids`, when
        given, are the manifest's current ids: a caller that read them already)."""
        token = self.manifest.change_token()
        if self._manifest_marker is not None and self._manifest_marker[0] == token:
            return self._manifest_marker[1]
        ids = self.manifest.chunk_ids() if chunk_ids is None else chunk_ids
        digest = hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()
        embedded = self.manifest.counts()["embedded"]
        part = f"{len(ids)}|{embedded}|{digest}"
        self._manifest_marker = (token, part)
        return part

    def store_in_sync(self, chunk_ids: set[str] | None = None) -> bool:
        """True when nothing changed on either side since a run found store and manifest in
        agreement: the reconcile (reading every id back from the store, and for embedded
        Chroma importing chromadb at all) can be skipped. Any write through the indexer or
        the server changes the chunk ids or the embedded count; a store set aside, emptied or
        replaced changes its files."""
        marker = self.manifest.get_meta(STORE_SYNC_KEY)
        return marker is not None and marker == self.store_sync_marker(chunk_ids)

    def mark_store_in_sync(self, chunk_ids: set[str] | None = None) -> None:
        """Record that the store and the manifest agree now (after a reconcile and every write
        of a run went through)."""
        marker = self.store_sync_marker(chunk_ids)
        if marker is not None:
            self.manifest.set_meta(STORE_SYNC_KEY, marker)

    def clear(self) -> None:
        """Drop every stored chunk and vector (a rebuild); the vault itself is never touched."""
        self.manifest.clear()
        self.manifest.set_meta("model_id", self.provider.model_id)
        self.manifest.set_meta("dimension", str(self.provider.dimension))
        self.store.reset()
        self.claim_store()
        self.lexical.clear()

    def close(self) -> None:
        close_store = getattr(self.store, "close", None)
        if close_store is not None:
            close_store()
        self.lexical.close()
        self.manifest.close()
