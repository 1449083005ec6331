"""Build the long-lived objects (provider, index) from settings, once, for CLI and server."""

from __future__ import annotations

import logging

from vault_rag.chunking.pipeline import chunk_options
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.embeddings.factory import make_provider
from vault_rag.index.snapshot_build import SnapshotSearchStore
from vault_rag.index.stores.factory import open_vector_store
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.maintenance import doctor
from vault_rag.settings import Settings
from vault_rag.sources.registry import source_registry
from vault_rag.storage.disk_faults import disk_fault
from vault_rag.vault.exclusions import Exclusions

log = logging.getLogger(__name__)


def build_provider(settings: Settings) -> EmbeddingProvider:
    """The configured embedding provider; each kind takes only the settings that apply to it."""
    options: dict[str, object] = {"batch_size": settings.embeddings_batch_size}
    if settings.embeddings in ("fastembed", "openai"):
        options["model"] = settings.embeddings_model
    if settings.embeddings == "openai":
        api_key = settings.embeddings_api_key
        options |= {
            "base_url": settings.embeddings_base_url,
            "api_key": api_key.get_secret_value() if api_key else None,
            "max_tokens": settings.embeddings_max_tokens,
        }
    return make_provider(settings.embeddings, **options)


def open_index(
    settings: Settings,
    provider: EmbeddingProvider | None = None,
    *,
    lazy_store: bool = False,
    search_only: bool = False,
) -> VaultIndex:
    """The index of the configured vault. Damaged files are set aside first (see
    `maintenance/doctor.py`: the index is rebuilt from the vault, the feedback and conversation
    stores start afresh); `DamagedDataError` when that is impossible because another process writes
    the data dir.

    `lazy_store` (`vault-rag index`): when the last run left the store and the manifest in
    agreement and neither changed since (`VaultIndex.store_in_sync`), embedded Chroma is only
    opened if the run needs it, so a run with nothing to do never imports chromadb.

    `search_only` (`vault-rag search` in its own process): while the dense snapshot is
    current, embedded Chroma's searches come from it and the store is never opened
    (`index/dense/snapshot.py`). Such a command only reads: damage raises `DamagedDataError`
    and nothing is moved.

    A full disk, a read-only mount or an I/O error raises `DataDirUnavailableError`
    (`storage/disk_faults.py`), also with nothing moved."""
    if settings.vault is None:
        raise ValueError("no vault configured: pass --vault PATH or set VAULT_RAG_VAULT")
    data_dir = settings.resolved_data_dir()
    if provider is None:
        # The model chosen in Obsidian (`embedding.json` in the data dir) over the settings file
        from vault_rag.serving.embedding_choice import with_stored_choice

        provider = build_provider(with_stored_choice(settings))
    vault, model_id = settings.vault, provider.model_id
    if search_only:
        doctor.refuse_damage(data_dir)
    else:
        for action in doctor.recover(data_dir):
            log.warning("%s", action)

    def build() -> VaultIndex:
        lazy = lazy_store or search_only
        store, info = open_vector_store(settings, vault, data_dir, model_id, lazy=lazy)
        index = VaultIndex(vault, data_dir, provider, store=store, store_info=info)
        connect = getattr(store, "connect", None) if lazy else None
        if connect is None:
            return index
        if search_only and index.current_snapshot() is not None:
            index.store = SnapshotSearchStore(store, index)  # type: ignore[assignment]
        elif search_only or not index.store_in_sync():
            try:  # opened now, where a store that fails to open is recovered as before
                connect()
            except BaseException:
                index.close()
                raise
        return index

    try:
        return build()
    except Exception as exc:
        fault = disk_fault(exc, data_dir)
        if fault is not None:
            raise fault from exc
        if search_only:
            raise doctor.DamagedDataError(
                f"the index in {data_dir} cannot be opened ({type(exc).__name__}: {exc}); "
                "nothing was moved: `vault-rag doctor` checks it"
            ) from exc
        actions = doctor.recover_after_failure(data_dir, exc)
        if not actions:
            raise
        for action in actions:
            log.warning("%s", action)
    return build()  # on the files set up afresh


def make_indexer(settings: Settings, index: VaultIndex) -> Indexer:
    """An indexer with the configured chunking (`chunk_options`) that skips the ignored and
    excluded folders (the `exclude` setting and the plugin's list in the data dir)."""
    return Indexer(
        index,
        ignores=Exclusions.load(settings, index.data_dir).ignores(),
        chunk_options=chunk_options(settings, index.provider),
        batch_size=settings.embeddings_batch_size,
        sources=source_registry(settings),
        sections=settings.cite_spans,
    )
