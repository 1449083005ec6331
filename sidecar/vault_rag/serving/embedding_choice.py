"""Which embedding model the index is opened with: the settings file's, or the one chosen in
Obsidian and kept in `embedding.json` in the data dir (non-secret fields only; the key is held
in memory, sent by the plugin after each connection). Laid over the settings at every start,
the CLI's included, so the index and the configured model agree
(`services/embedding_choice.py` offers and prices a change)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from vault_rag.settings import Settings

CHOICE_FILE = "embedding.json"
PROVIDERS = ("local", "fastembed", "openai", "hash")


class EmbeddingChoiceError(ValueError):
    """A choice that cannot be used (unknown provider, missing model name, ...)."""


@dataclass(frozen=True)
class EmbeddingChoice:
    """`provider` and its model (fastembed / openai) and endpoint (openai). `api_key` is for
    memory only: `save_choice` never writes it."""

    provider: str
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None

    def public(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}


def normalize(choice: EmbeddingChoice) -> EmbeddingChoice:
    """The choice with only the fields its provider takes, trimmed; `EmbeddingChoiceError`
    when it is not usable."""
    provider = choice.provider.strip().lower()
    if provider not in PROVIDERS:
        raise EmbeddingChoiceError(
            f"unknown embedding provider {choice.provider!r}; "
            f"expected one of {', '.join(PROVIDERS)}"
        )
    model = (choice.model or "").strip() or None
    base_url = (choice.base_url or "").strip().rstrip("/") or None
    if provider in ("fastembed", "openai") and not model:
        raise EmbeddingChoiceError(f"the {provider!r} embedding provider needs a model name")
    if provider != "openai":
        base_url = None
    if provider in ("local", "hash"):
        model = None
    key = choice.api_key.strip() if choice.api_key else None
    return EmbeddingChoice(provider, model, base_url, key or None if provider == "openai" else None)


def current_choice(settings: Settings) -> EmbeddingChoice:
    key = settings.embeddings_api_key.get_secret_value() if settings.embeddings_api_key else None
    return normalize(
        EmbeddingChoice(
            settings.embeddings, settings.embeddings_model, settings.embeddings_base_url, key
        )
    )


def same_model(a: EmbeddingChoice, b: EmbeddingChoice) -> bool:
    """Same vectors: the key does not count (the endpoint's URL does, as the user sees it)."""
    return a.public() == b.public()


def apply_embedding_choice(settings: Settings, choice: EmbeddingChoice) -> Settings:
    """`settings` with the choice laid over (a copy). The settings file's key is kept only for
    its own endpoint: it never goes to another server."""
    choice = normalize(choice)
    key = choice.api_key
    if key is None and settings.embeddings == "openai":
        same_endpoint = (settings.embeddings_base_url or "").rstrip("/") == (choice.base_url or "")
        if same_endpoint and settings.embeddings_api_key is not None:
            key = settings.embeddings_api_key.get_secret_value()
    return settings.model_copy(
        update={
            "embeddings": choice.provider,
            "embeddings_model": choice.model,
            "embeddings_base_url": choice.base_url,
            "embeddings_api_key": SecretStr(key) if key else None,
        }
    )


# -- kept in the data dir ---------------------------------------------------------------------
def load_choice(data_dir: Path) -> EmbeddingChoice | None:
    """The choice kept in the data dir; None when there is none. A damaged file is an error
    (guessing would open the index with the wrong model)."""
    path = data_dir / CHOICE_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise EmbeddingChoiceError(
            f"{path} cannot be read ({exc}); delete it to use the settings"
        ) from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("provider"), str):
        raise EmbeddingChoiceError(f"{path} holds no embedding choice; delete it")
    return normalize(EmbeddingChoice(str(raw["provider"]), raw.get("model"), raw.get("base_url")))


def save_choice(data_dir: Path, choice: EmbeddingChoice) -> None:
    """Write the choice's non-secret fields (never the key), atomically, 0600."""
    path = data_dir / CHOICE_FILE
    temp = path.with_suffix(".json.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(normalize(choice).public(), handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def with_stored_choice(settings: Settings) -> Settings:
    """The settings with the choice kept in their data dir laid over (unchanged without one)."""
    if settings.vault is None and settings.data_dir is None:
        return settings
    choice = load_choice(settings.resolved_data_dir())
    return settings if choice is None else apply_embedding_choice(settings, choice)
