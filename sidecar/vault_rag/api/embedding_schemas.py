"""Bodies of `/v1/settings/embeddings`: the embedding model chosen in Obsidian
(`services/embedding_choice.py`, `services/embedding_rebuild.py`). Keys go in, never out."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from vault_rag.api.schemas import ApiModel, EmbeddingSwitchState

Short = Annotated[str, Field(max_length=2048)]


class EmbeddingsUpdate(ApiModel):
    provider: Literal["local", "fastembed", "openai", "hash"] = Field(
        description="local: the bundled model; fastembed: a model in fastembed's cache; "
        "openai: an OpenAI-compatible /v1/embeddings endpoint; hash: a test stand-in"
    )
    model: Short | None = Field(None, description="Model name (fastembed, openai)")
    base_url: Short | None = Field(
        None, description="The endpoint (openai), e.g. http://127.0.0.1:11434/v1; empty: OpenAI"
    )
    api_key: Short | None = Field(
        None, description="The endpoint's API key, held in memory only (never written)"
    )
    confirm: bool = Field(
        False,
        description="false: change nothing, answer what the change costs; true: re-embed the "
        "vault with this model beside the working index and switch when it is complete",
    )


class EmbeddingOption(BaseModel):
    provider: str
    label: str
    models: list[str] = Field(description="Models present offline (fastembed's cache)")
    available: bool
    reason: str | None = Field(description="Why it cannot be chosen here; null: it can")


class EmbeddingsState(BaseModel):
    source: Literal["settings", "plugin"] = Field(
        description="settings: the settings file's model; plugin: chosen in Obsidian (kept in "
        "the data dir's embedding.json, without the key)"
    )
    provider: str
    model: str | None
    base_url: str | None
    has_key: bool
    model_id: str = Field(description="The embedding model id in use")
    index_model: str | None = Field(description="The model the index was built with")
    notes: int
    units: int = Field(description="Units in the index: what a change re-embeds")
    options: list[EmbeddingOption]
    switch: EmbeddingSwitchState | None = Field(description="The last or running switch")


class EmbeddingCost(BaseModel):
    notes: int
    units: int = Field(description="Units to re-embed (all of them)")
    seconds: int | None = Field(description="Estimated re-embedding time; null: not measured")
    rate_per_s: float | None = Field(description="The new model's measured units a second")
    basis: str = Field(description="How the time was estimated")
    dimension: int | None = Field(description="The new model's vector size")
    model_id: str | None
    error: str | None = Field(description="Why the new model cannot be used; null: it can")
    message: str = Field(description="One plain sentence for the user")


class EmbeddingsChange(BaseModel):
    changed: bool = Field(description="A switch was started (or a key was updated)")
    started: bool = Field(description="A re-index with the new model was started")
    message: str
    cost: EmbeddingCost | None = Field(description="What the change costs (without confirm)")
    state: EmbeddingsState


class EmbeddingTestResult(BaseModel):
    ok: bool
    message: str = Field(description="One line: the dimension and time, or why it failed")
    dimension: int | None = None
    model_id: str | None = None
    seconds: float | None = None
