"""Bodies of `/v1/models` and `/v1/settings/models`: the chat model and web search chosen in
Obsidian (`services/model_choice.py`). Keys go in, never out: answers say only whether one is
set."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from vault_rag.api.schemas import ApiModel

Short = Annotated[str, Field(max_length=2048)]


class ModelsUpdate(ApiModel):
    base_url: Short | None = Field(
        None,
        description="OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 (Ollama); "
        "empty: api.openai.com. Absent (null): the settings file's value.",
    )
    model: Short | None = Field(
        None, description="Chat model id; empty: no chat model (quoted answers). Null: keep."
    )
    api_key: Short | None = Field(
        None, description="The server's API key (held in memory only); empty: none. Null: keep."
    )
    tavily_api_key: Short | None = Field(
        None, description="Tavily key for web search (memory only); empty: no web search."
    )
    web_include_domains: list[Annotated[str, Field(max_length=253)]] | None = Field(
        None, max_length=200, description="Domains web search may use; []: the default list."
    )


class ChatModelState(BaseModel):
    source: Literal["settings", "plugin"] = Field(
        description="settings: the sidecar's settings file; plugin: pushed by the plugin"
    )
    base_url: str = Field(description="The server asked (api.openai.com when none is set)")
    model: str | None = Field(description="The chat model; null: none (quoted answers)")
    has_key: bool
    models: list[str] = Field(description="What the server lists at /v1/models ([] on error)")
    error: str | None = Field(description="Why the list could not be read; null: it was")


class WebSearchState(BaseModel):
    enabled: bool = Field(description="A Tavily key is set")
    include_domains: list[str] | None


class EmbeddingState(BaseModel):
    provider: str = Field(description="local, fastembed, openai or hash")
    model: str = Field(description="The index's embedding model id")
    change: str = Field(description="What changing it costs (a full re-index)")


class ModelsState(BaseModel):
    chat: ChatModelState
    web: WebSearchState
    embeddings: EmbeddingState


class ModelTestResult(BaseModel):
    ok: bool
    message: str = Field(description="One line: the answer's time, or why it failed")
    reply: str | None = Field(None, description="What the model answered")
    models: list[str] | None = Field(None, description="What the server lists")
    seconds: float | None = None
