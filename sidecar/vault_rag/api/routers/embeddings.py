"""`/v1/settings/embeddings`: the embedding model chosen in Obsidian.

GET lists what is on offer and the switch in progress; PUT without `confirm` answers the cost
and changes nothing; PUT with `confirm` re-embeds beside the working index and switches when
complete (`services/embedding_rebuild.py`, `api/embedding_swap.py`). The same model again only
updates the key, in memory."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, Request

from vault_rag.api.deps import ReaderState, ServerState, State
from vault_rag.api.embedding_schemas import (
    EmbeddingCost,
    EmbeddingOption,
    EmbeddingsChange,
    EmbeddingsState,
    EmbeddingsUpdate,
    EmbeddingSwitchState,
    EmbeddingTestResult,
)
from vault_rag.api.errors import ApiError
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.services.embedding_choice import (
    EmbeddingChoice,
    EmbeddingChoiceError,
    apply_embedding_choice,
    current_choice,
    estimate_cost,
    load_choice,
    normalize,
    offered,
    refusal,
    same_model,
    sample_texts,
    total_chars,
)
from vault_rag.serving.context import build_provider
from vault_rag.settings import Settings

router = APIRouter(tags=["models"])


def switch_state(app_state: Any) -> EmbeddingSwitchState | None:
    job = getattr(app_state, "embedding_rebuild", None)
    if job is None or job.status.state == "idle":
        return None
    s = job.status
    end = s.finished or time.monotonic()
    # While swapping, the swap's own step (draining the answers under way, opening the index).
    swapping = getattr(app_state, "switching", None) if s.state == "swapping" else None
    return EmbeddingSwitchState(
        state=s.state,  # type: ignore[arg-type]
        provider=s.provider,
        model=s.model,
        model_id=s.model_id,
        phase=s.phase,
        done=s.done,
        total=s.total,
        eta_seconds=s.eta_seconds(),
        elapsed_seconds=round(end - s.started, 1) if s.started else None,
        error=s.error,
        message=swapping or s.message,
    )


def _state(request: Request, state: ServerState) -> EmbeddingsState:
    settings, index = state.settings, state.index
    counts = index.manifest.counts()
    key = settings.embeddings_api_key
    return EmbeddingsState(
        source="plugin" if load_choice(index.data_dir) is not None else "settings",
        provider=settings.embeddings,
        model=settings.embeddings_model,
        base_url=settings.embeddings_base_url,
        has_key=bool(key and key.get_secret_value()),
        model_id=index.provider.model_id,
        index_model=index.model_id,
        notes=counts["notes"],
        units=counts["chunks"],
        options=[EmbeddingOption(**o) for o in offered(settings, _file_provider(request))],
        switch=switch_state(request.app.state),
    )


def _file_provider(request: Request) -> str | None:
    """The settings file's provider, as the server started (before the kept choice)."""
    args = getattr(request.app.state, "open_args", None)
    return args[0].embeddings if args else None


def _choice(body: EmbeddingsUpdate, request: Request, settings: Settings) -> EmbeddingChoice:
    """The body as a choice; 400 `bad_choice` when it cannot be used here."""
    try:
        choice = normalize(EmbeddingChoice(body.provider, body.model, body.base_url, body.api_key))
    except EmbeddingChoiceError as exc:
        raise ApiError(400, "bad_choice", str(exc)) from exc
    if not same_model(choice, current_choice(settings)):
        why = refusal(choice, settings, _file_provider(request))
        if why is not None:
            raise ApiError(400, "bad_choice", why)
    return choice


@router.get(
    "/settings/embeddings", response_model=EmbeddingsState, summary="Embedding models on offer"
)
def get_embeddings(request: Request, state: ReaderState) -> EmbeddingsState:
    """The embedding model in use, what can be chosen here, and the switch under way (also
    while the switch drains the old state: the plugin follows the switch with this)."""
    return _state(request, state)


def _update_key(state: ServerState, choice: EmbeddingChoice) -> None:
    """The same model with the key the plugin holds: a new provider, no re-embedding."""
    settings = apply_embedding_choice(state.settings, choice)
    state.index.provider = build_provider(settings)
    state.settings = settings
    if state.configured_settings is not None:
        state.configured_settings = apply_embedding_choice(state.configured_settings, choice)


def _change(request: Request, state: ServerState, body: EmbeddingsUpdate) -> EmbeddingsChange:
    choice = _choice(body, request, state.settings)
    job = request.app.state.embedding_rebuild
    in_use = current_choice(state.settings)
    if same_model(choice, in_use):
        new_key = choice.api_key is not None and choice.api_key != in_use.api_key
        if new_key:
            _update_key(state, choice)
        message = "this embedding model is in use" + ("; its key was updated" if new_key else "")
        return EmbeddingsChange(
            changed=new_key, started=False, message=message, cost=None, state=_state(request, state)
        )
    if job.running:
        raise ApiError(409, "switch_running", "a switch of embedding model is under way")
    if state.settings.vector_store != "chroma":
        raise ApiError(
            409,
            "store_unsupported",
            f"switching from Obsidian needs the embedded Chroma store (this index uses "
            f"{state.settings.vector_store}); set `embeddings` in the settings file and run "
            "`vault-rag index --rebuild`",
        )
    base = state.configured_settings or state.settings
    settings = apply_embedding_choice(base, choice)
    provider, error = None, None
    try:
        provider = build_provider(settings)
    except (EmbeddingError, ValueError) as exc:
        error = str(exc)
    if not body.confirm:
        manifest = state.index.manifest
        texts, chars = sample_texts(manifest), total_chars(manifest)
        cost = estimate_cost(manifest.counts(), provider, texts, error, chars)
        return EmbeddingsChange(
            changed=False,
            started=False,
            message=cost.message,
            cost=EmbeddingCost(**cost.as_dict()),
            state=_state(request, state),
        )
    if provider is not None and error is None:
        try:  # one call first: a model that cannot answer starts nothing
            provider.embed_documents(["Vault RAG"])
        except EmbeddingError as exc:
            error = str(exc)
    if provider is None or error is not None:
        raise ApiError(502, "embedding_unavailable", f"nothing was changed: {error}")
    from vault_rag.api.embedding_swap import swap_in

    app = request.app
    started = job.start(
        settings,
        provider,
        state.index.data_dir,
        lambda staging: swap_in(app, staging, settings, choice),
        (choice.provider, choice.model),
    )
    if not started:
        raise ApiError(409, "switch_running", "a switch of embedding model is under way")
    return EmbeddingsChange(
        changed=True,
        started=True,
        message="re-embedding the vault with the new model; searches use the current index "
        "until the new one is complete",
        cost=None,
        state=_state(request, state),
    )


@router.put(
    "/settings/embeddings", response_model=EmbeddingsChange, summary="Choose the embedding model"
)
async def put_embeddings(body: EmbeddingsUpdate, request: Request, state: State) -> Any:
    """Without `confirm`: what the change costs (units, estimated time measured on a sample of
    the index's units), nothing changed. With `confirm`: re-embed beside the working index and
    switch when complete (`/v1/status` `embedding_switch` shows progress). The non-secret
    fields are kept in the data dir; the key only in memory."""
    return await asyncio.to_thread(_change, request, state, body)


@router.post(
    "/settings/embeddings/test",
    response_model=EmbeddingTestResult,
    summary="Try an embedding model",
)
def test_embeddings(body: EmbeddingsUpdate, request: Request, state: State) -> EmbeddingTestResult:
    """One embedding call with the given choice; its dimension back, or why it failed.
    Nothing is changed."""
    choice = _choice(body, request, state.settings)
    settings = apply_embedding_choice(state.configured_settings or state.settings, choice)
    started = time.monotonic()
    try:
        provider = build_provider(settings)
        vector = provider.embed_documents(["Vault RAG connection test"])[0]
    except (EmbeddingError, ValueError) as exc:
        return EmbeddingTestResult(ok=False, message=str(exc))
    seconds = round(time.monotonic() - started, 2)
    return EmbeddingTestResult(
        ok=True,
        message=f"{provider.model_id} answered in {seconds} s with {len(vector)}-d vectors",
        dimension=len(vector),
        model_id=provider.model_id,
        seconds=seconds,
    )
