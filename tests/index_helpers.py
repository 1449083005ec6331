"""Helpers for index tests: a counting wrapper around a real provider, vault copies."""

from __future__ import annotations

import shutil
from pathlib import Path

from vault_rag.embeddings.base import EmbeddingProvider


class CountingProvider:
    """Wraps a real provider; records every text the indexer asks to embed.

    Vectors are memoised by text so many tests can re-index the same vault with the real model
    without paying for it again; the counts still show exactly what the indexer requested.
    """

    def __init__(self, inner: EmbeddingProvider, model_id: str | None = None) -> None:
        self.inner = inner
        self.model_id = model_id or inner.model_id
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self.embedded: list[str] = []
        self._memo: dict[str, list[float]] = {}

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            self._memo.update(zip(todo, self.inner.embed_documents(todo), strict=True))
        return [self._memo[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    def reset(self) -> None:
        self.embedded.clear()


def copy_vault(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target
