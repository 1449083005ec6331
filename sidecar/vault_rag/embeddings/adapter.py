"""Expose any provider as a LangChain ``Embeddings`` (for langchain-chroma and friends)."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from .base import EmbeddingProvider


class ProviderEmbeddings(Embeddings):
    """LangChain view of an `EmbeddingProvider`.

    The async methods come from ``Embeddings``: they run the sync ones in the default executor,
    which is safe because every provider is callable from worker threads.
    """

    def __init__(self, provider: EmbeddingProvider) -> None:
        self.provider = provider

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.provider.embed_documents(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self.provider.embed_query(text)

    def __repr__(self) -> str:
        return f"ProviderEmbeddings({self.provider!r})"


def as_langchain(provider: EmbeddingProvider) -> ProviderEmbeddings:
    """`provider` as a LangChain ``Embeddings`` (errors stay `EmbeddingError`)."""
    return ProviderEmbeddings(provider)
