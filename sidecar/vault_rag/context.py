"""Build the long-lived objects (provider, index) from settings, once, for CLI and server."""

from __future__ import annotations

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.embeddings.factory import make_provider
from vault_rag.index.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.settings import Settings


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


def open_index(settings: Settings, provider: EmbeddingProvider | None = None) -> VaultIndex:
    if settings.vault is None:
        raise ValueError("no vault configured: pass --vault PATH or set VAULT_RAG_VAULT")
    return VaultIndex(
        settings.vault, settings.resolved_data_dir(), provider or build_provider(settings)
    )


def make_indexer(settings: Settings, index: VaultIndex) -> Indexer:
    """An indexer with the configured chunk sizes, capped by the embedding model's input limit."""
    options = ChunkOptions(
        target_min=settings.chunk_min,
        target_max=settings.chunk_max,
        max_tokens=index.provider.max_tokens,
        count_tokens=index.provider.count_tokens,
    )
    return Indexer(
        index,
        ignores=settings.ignore,
        chunk_options=options,
        batch_size=settings.embeddings_batch_size,
    )
