"""`/v1/models` and `/v1/settings/models`: the chat model and web search chosen in Obsidian.

The choice is laid over the settings file's values and held in memory (keys included, never
written anywhere); the plugin pushes it again after every (re)connection. Runs under way keep
the model they started with."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query

from vault_rag.api.deps import ServerState, State
from vault_rag.api.model_schemas import (
    ChatModelState,
    EmbeddingState,
    ModelsState,
    ModelsUpdate,
    ModelTestResult,
    WebSearchState,
)
from vault_rag.services.model_choice import (
    ModelChoice,
    ModelServerError,
    apply_choice,
    base_url_of,
    list_models,
    replace_resources,
    try_model,
)

router = APIRouter(tags=["models"])

REINDEX = (
    "Changing the embedding model re-embeds every note (a full re-index): choose it in "
    "Obsidian (`PUT /v1/settings/embeddings`, which answers the cost first), or set "
    "`embeddings` and `embeddings_model` in the sidecar's settings file and run "
    "`vault-rag index --rebuild`."
)


def _choice(body: ModelsUpdate) -> ModelChoice:
    return ModelChoice(**body.model_dump())


def _state(state: ServerState, *, listed: bool) -> ModelsState:
    settings = state.settings
    models: list[str] = []
    error: str | None = None
    if listed:
        if settings.llm_base_url or settings.llm_api_key:
            try:
                models = list_models(settings)
            except ModelServerError as exc:
                error = str(exc)
        else:
            error = "no model server is set (choose a base URL or an API key)"
    return ModelsState(
        chat=ChatModelState(
            source="plugin" if state.model_choice is not None else "settings",
            base_url=base_url_of(settings),
            model=settings.llm_model,
            has_key=bool(settings.llm_api_key and settings.llm_api_key.get_secret_value()),
            models=models,
            error=error,
        ),
        web=WebSearchState(
            enabled=bool(settings.tavily_api_key and settings.tavily_api_key.get_secret_value()),
            include_domains=settings.web_include_domains,
        ),
        embeddings=EmbeddingState(
            provider=settings.embeddings, model=state.index.provider.model_id, change=REINDEX
        ),
    )


@router.get("/models", response_model=ModelsState, summary="The models in use and on offer")
def get_models(state: State, listed: Annotated[bool, Query(alias="list")] = True) -> ModelsState:
    """The chat model in use, what its server lists at `/v1/models` (unless `list=false`), web
    search and the embedding model (read-only here: changing it is a re-index)."""
    return _state(state, listed=listed)


@router.put("/settings/models", response_model=ModelsState, summary="Choose the chat model")
async def put_models(body: ModelsUpdate, state: State) -> ModelsState:
    """Lay the choice over the settings file's values (null fields keep them) and use it for
    the next question. Held in memory only."""
    settings = apply_choice(state.configured_settings or state.settings, _choice(body))
    state.resources = await asyncio.to_thread(replace_resources, state.resources, settings)
    state.settings = settings
    choice = _choice(body)
    state.model_choice = None if choice == ModelChoice() else choice
    return await asyncio.to_thread(_state, state, listed=False)


@router.post("/settings/models/test", response_model=ModelTestResult, summary="Try a chat model")
def try_models(body: ModelsUpdate, state: State) -> ModelTestResult:
    """List the server's models and ask the model one short question, with the given choice
    laid over the one in use; nothing is changed."""
    result = try_model(apply_choice(state.settings, _choice(body)))
    return ModelTestResult(**vars(result))
