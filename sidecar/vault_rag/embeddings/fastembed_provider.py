"""Any fastembed (ONNX) text-embedding model, for users who can download it once.

fastembed fetches the model from Hugging Face on first use and caches it. To never touch the
network when the model is already cached, we first load with ``local_files_only=True`` and only
fall back to a download when ``allow_download`` is true (and ``HF_HUB_OFFLINE`` is not set,
which fastembed itself honours). Without network a missing model fails within seconds with an
`EmbeddingUnavailable` instead of fastembed's ~40 s of retries.

fastembed's tokenizer truncates silently at the model's limit, so `count_tokens` uses an
untruncated copy of the real tokenizer, and `embed_documents` logs a warning for inputs the
model will truncate (the indexer's chunks never are: `chunking.chunker.chunk_options` caps them
at the model's limit).

Thread-safety: onnxruntime sessions allow concurrent ``run`` calls, but the tokenizer object's
truncation/padding settings are shared state; calls are serialised with a lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .base import EmbeddingUnavailable, batched, prefix_tag, sanitize_text

log = logging.getLogger(__name__)

# Models that were trained with instruction prefixes (fastembed does not add them itself).
_KNOWN_PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("e5", "query: ", "passage: "),
    ("nomic-embed-text", "search_query: ", "search_document: "),
)
_INSTALL_HINT = "install it with `pip install vault-rag[fastembed]` (or `pip install fastembed`)"


def default_prefixes(model_name: str) -> tuple[str, str]:
    """(query_prefix, passage_prefix) the model card of `model_name` asks for, else ("", "")."""
    lowered = model_name.lower()
    for marker, query_prefix, passage_prefix in _KNOWN_PREFIXES:
        if marker in lowered.rsplit("/", 1)[-1]:
            return query_prefix, passage_prefix
    return "", ""


@contextmanager
def _quiet_fastembed() -> Iterator[None]:
    """Mute fastembed's loguru messages (it logs a cache miss as ERROR) for the block."""
    try:
        from loguru import logger
    except ImportError:  # pragma: no cover - a fastembed dependency
        yield
        return
    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


class FastEmbedProvider:
    """A fastembed ``TextEmbedding`` model behind the `EmbeddingProvider` interface."""

    dimension: int
    max_tokens: int
    model_id: str

    def __init__(
        self,
        model: str = "intfloat/multilingual-e5-large",
        cache_dir: str | None = None,
        threads: int | None = None,
        batch_size: int = 32,
        allow_download: bool = True,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
    ) -> None:
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"the 'fastembed' provider needs the fastembed package: {_INSTALL_HINT}"
            ) from exc
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")

        supported = {d["model"].lower(): d for d in TextEmbedding.list_supported_models()}
        description = supported.get(model.lower())
        if description is None:
            raise EmbeddingUnavailable(
                f"fastembed does not know the model {model!r}; see "
                "fastembed.TextEmbedding.list_supported_models() for the names it supports"
            )

        options: dict[str, Any] = {"model_name": model, "cache_dir": cache_dir, "threads": threads}
        try:
            with _quiet_fastembed():  # a cache miss is expected here, not an ERROR for the log
                engine = TextEmbedding(**options, local_files_only=True)
        except Exception as cached_exc:  # fastembed raises bare ValueError/OSError here
            if not allow_download:
                raise EmbeddingUnavailable(
                    f"fastembed model {model!r} is not in the cache"
                    f"{f' ({cache_dir})' if cache_dir else ''} and downloads are disabled. "
                    "Download it once with network access, or use the 'local' or 'openai' "
                    "provider."
                ) from cached_exc
            try:
                engine = TextEmbedding(**options)
            except Exception as exc:
                raise EmbeddingUnavailable(
                    f"fastembed could not load or download model {model!r} "
                    f"({str(exc).rstrip('.')}). It is not "
                    "cached and could not be fetched (no network, or HF_HUB_OFFLINE=1?). "
                    "Download it once with network access, or use the 'local' provider "
                    "(built in, no download) or the 'openai' provider."
                ) from exc

        self._engine = engine
        self._lock = threading.Lock()
        self.model_name = str(description["model"])
        self.batch_size = batch_size
        self.dimension = int(description["dim"])
        default_query, default_passage = default_prefixes(self.model_name)
        self.query_prefix = default_query if query_prefix is None else query_prefix
        self.passage_prefix = default_passage if passage_prefix is None else passage_prefix
        tag = prefix_tag(self.query_prefix, self.passage_prefix)
        self.model_id = f"fastembed:{self.model_name}{tag}"

        tokenizer = getattr(getattr(engine, "model", None), "tokenizer", None)
        if tokenizer is None:  # not an ONNX transformer model (e.g. a static one)
            raise EmbeddingUnavailable(f"fastembed model {model!r} exposes no tokenizer")
        truncation = tokenizer.truncation or {}
        self.max_tokens = int(truncation.get("max_length") or 512)
        # An untruncated, unpadded copy: counting must see the whole text.
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_str(tokenizer.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._warned_truncation = False

    def count_tokens(self, text: str) -> int:
        """Tokens fed for `text` as a passage (prefix and special tokens included)."""
        encoding = self._tokenizer.encode(self.passage_prefix + sanitize_text(text))
        return len(encoding.ids)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        prefixed = [self.passage_prefix + sanitize_text(t) for t in texts]
        too_long = sum(len(e.ids) > self.max_tokens for e in self._tokenizer.encode_batch(prefixed))
        if too_long and not self._warned_truncation:
            self._warned_truncation = True
            log.warning(
                "%d text(s) exceed %s's %d-token limit and are truncated by fastembed; "
                "keep inputs within the limit (the indexer's chunks are, see chunk_options)",
                too_long,
                self.model_name,
                self.max_tokens,
            )
        vectors: list[list[float]] = []
        for batch in batched(prefixed, self.batch_size):
            with self._lock:
                rows = list(self._engine.embed(list(batch), batch_size=self.batch_size))
            vectors.extend(row.tolist() for row in rows)
        return vectors

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            rows = list(self._engine.embed([self.query_prefix + sanitize_text(text)]))
        return [float(x) for x in rows[0].tolist()]

    def __repr__(self) -> str:
        return f"FastEmbedProvider(model_id={self.model_id!r})"
