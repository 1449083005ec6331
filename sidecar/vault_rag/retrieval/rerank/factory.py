"""The one place a re-ranker is built from the settings (`rerank`: none, http or llm).

One re-ranker per distinct configuration per process (`reranker_for`), so its connection pool
and its health (calls, fallbacks, last error: `/v1/status`) are shared by every search path.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from vault_rag.retrieval.rerank.base import Reranker, RerankError, RerankHealth
from vault_rag.settings import Settings

_lock = threading.Lock()
_built: dict[tuple[object, ...], Reranker] = {}


class RerankConfigError(ValueError):
    """The `rerank` setting cannot be used as configured (no URL, no chat model)."""


class MisconfiguredReranker:
    """Stands in for a re-ranker the settings cannot build: every search falls back to the
    fused order and says why (the search itself never fails on a re-ranker)."""

    def __init__(self, kind: str, problem: str) -> None:
        self.kind = kind
        self.label = f"{kind} (not configured)"
        self.problem = problem
        self.health = RerankHealth()

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        raise RerankError(self.problem)


def make_reranker(settings: Settings) -> Reranker | None:
    """A new re-ranker for the settings, or None for `rerank = "none"`."""
    if settings.rerank == "none":
        return None
    if settings.rerank == "http":
        from vault_rag.retrieval.rerank.http import HttpReranker

        if not settings.rerank_url:
            raise RerankConfigError('rerank = "http" needs rerank_url (e.g. …/v1/rerank)')
        key = settings.rerank_api_key.get_secret_value() if settings.rerank_api_key else None
        return HttpReranker(
            settings.rerank_url, settings.rerank_model, key, settings.rerank_timeout
        )
    from vault_rag.retrieval.rerank.llm import LlmReranker

    if not settings.llm_model:
        raise RerankConfigError('rerank = "llm" needs a chat model (llm_model)')
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return LlmReranker(
        settings.llm_model,
        settings.llm_base_url,
        key,
        timeout=settings.rerank_timeout,
        max_candidates=settings.rerank_llm_candidates,
        token_budget=settings.rerank_llm_token_budget,
        temperature=settings.llm_temperature,
    )


def _key(settings: Settings) -> tuple[object, ...]:
    key = settings.rerank_api_key.get_secret_value() if settings.rerank_api_key else None
    llm_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return (
        settings.rerank,
        settings.rerank_url,
        settings.rerank_model,
        key,
        settings.rerank_timeout,
        settings.rerank_llm_candidates,
        settings.rerank_llm_token_budget,
        settings.llm_model,
        settings.llm_base_url,
        llm_key,
        settings.llm_temperature,
    )


def reranker_for(settings: Settings) -> Reranker | None:
    """The process's re-ranker for these settings (built once), or None when off."""
    if settings.rerank == "none":
        return None
    key = _key(settings)
    with _lock:
        if key not in _built:
            try:
                reranker = make_reranker(settings)
            except (RerankConfigError, ValueError) as exc:
                reranker = MisconfiguredReranker(settings.rerank, str(exc))
            if reranker is None:
                return None
            _built[key] = reranker
        return _built[key]
