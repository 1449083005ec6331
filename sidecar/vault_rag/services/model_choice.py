"""The chat model and web search chosen in Obsidian (`/v1/models`, `/v1/settings/models`).

The plugin keeps the keys in the app's secret storage and pushes its choice after each
connection; the sidecar holds it in memory only (never on disk), over the settings file's
values. `list_models` asks an OpenAI-compatible server (OpenAI, Ollama's `/v1`, llama.cpp,
LM Studio, vLLM) for its `/v1/models`; `try_model` sends one short chat request and says what
came back, or why nothing did, in one line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import httpx
from pydantic import SecretStr

from vault_rag.settings import Settings

OPENAI_BASE_URL = "https://api.openai.com/v1"
LIST_TIMEOUT = 10.0
TEST_PROMPT = "Reply with the single word: ready"


@dataclass(frozen=True)
class ModelChoice:
    """What the plugin chose. `None` fields keep the settings file's value; an empty string
    clears it (an empty `model`: no chat model, extractive answers)."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    tavily_api_key: str | None = None
    web_include_domains: list[str] | None = None


def apply_choice(settings: Settings, choice: ModelChoice) -> Settings:
    """`settings` with the choice laid over it (a copy; the original is unchanged)."""
    update: dict[str, Any] = {}
    if choice.base_url is not None:
        update["llm_base_url"] = choice.base_url.strip().rstrip("/") or None
    if choice.model is not None:
        update["llm_model"] = choice.model.strip() or None
    if choice.api_key is not None:
        update["llm_api_key"] = choice.api_key.strip() or None
    if choice.tavily_api_key is not None:
        update["tavily_api_key"] = choice.tavily_api_key.strip() or None
    if choice.web_include_domains is not None:
        domains = [d.strip().lower() for d in choice.web_include_domains if d.strip()]
        update["web_include_domains"] = domains or None
    for key in ("llm_api_key", "tavily_api_key"):  # as the settings file gives them
        if isinstance(update.get(key), str):
            update[key] = SecretStr(update[key])
    return settings.model_copy(update=update)


def base_url_of(settings: Settings) -> str:
    return (settings.llm_base_url or OPENAI_BASE_URL).rstrip("/")


def _headers(settings: Settings) -> dict[str, str]:
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
    return {"Authorization": f"Bearer {key}"} if key else {}


class ModelServerError(RuntimeError):
    """The model server could not be reached or refused; the message says which, in one line."""


def _explain(exc: Exception, url: str) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"{url} did not answer in time"
    if isinstance(exc, httpx.ConnectError):
        return f"nothing answers at {url} (is the server running?)"
    if isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        hint = " (check the API key)" if status in (401, 403) else ""
        return f"{url} answered HTTP {status}{hint}: {_message_of(exc.response)}"
    return f"{url}: {exc}"


def _message_of(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return " ".join(response.text.split())[:200]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message", ""))[:200]
    return str(error or body)[:200]


def list_models(settings: Settings, timeout: float = LIST_TIMEOUT) -> list[str]:
    """The model ids the configured server lists (`GET {base}/models`), sorted."""
    url = f"{base_url_of(settings)}/models"
    try:
        response = httpx.get(url, headers=_headers(settings), timeout=timeout)
        response.raise_for_status()
        data = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ModelServerError(_explain(exc, base_url_of(settings))) from exc
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ModelServerError(f"{url} did not answer with a model list")
    return sorted({str(m["id"]) for m in items if isinstance(m, dict) and "id" in m})


@dataclass(frozen=True)
class TryResult:
    ok: bool
    message: str
    reply: str | None = None
    models: list[str] | None = None
    seconds: float | None = None


def try_model(settings: Settings, timeout: float | None = None) -> TryResult:
    """List the server's models, then ask the chosen model one short question."""
    try:
        models = list_models(settings)
    except ModelServerError as exc:
        return TryResult(ok=False, message=str(exc))
    model = settings.llm_model
    if not model:
        return TryResult(
            ok=False, message=f"{len(models)} models listed; choose one to test", models=models
        )
    body = {
        "model": model,
        "messages": [{"role": "user", "content": TEST_PROMPT}],
        "max_tokens": 16,
        "temperature": 0,
    }
    started = time.monotonic()
    base = base_url_of(settings)
    try:
        response = httpx.post(
            f"{base}/chat/completions",
            json=body,
            headers=_headers(settings),
            timeout=timeout or settings.llm_timeout,
        )
        response.raise_for_status()
        reply = str(response.json()["choices"][0]["message"].get("content") or "").strip()
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
        message = _explain(exc, base) if isinstance(exc, httpx.HTTPError) else f"{exc!r}"
        return TryResult(ok=False, message=message, models=models)
    seconds = round(time.monotonic() - started, 2)
    return TryResult(
        ok=True,
        message=f"{model} answered in {seconds} s",
        reply=reply[:500],
        models=models,
        seconds=seconds,
    )


def replace_resources(resources: Any, settings: Settings) -> Any:
    """The answer graph's resources with the chat model and web search of `settings`; the
    index, feedback prior and defaults are kept. Runs under way keep the ones they started with."""
    from vault_rag.graph.config import DOMAIN_PRESETS
    from vault_rag.graph.llm import build_chat_provider
    from vault_rag.graph.web import build_web_search

    preset = DOMAIN_PRESETS.get(settings.domain_preset or "")
    include = settings.web_include_domains
    if include is None and preset is not None:
        include = list(preset.include_domains)
    return replace(
        resources,
        llm=build_chat_provider(settings),
        web=build_web_search(settings, include_domains=include or []),
        settings=settings,
    )


def resources_for_model(resources: Any, model: str | None) -> Any:
    """The answer graph's resources with the chat model `model` of the same server (the one a
    question picked in the pane); `None` or the model in use: `resources` unchanged. The
    server, key, limits and web search stay those in use."""
    settings = resources.settings
    if model is None or model.strip() == (settings.llm_model or ""):
        return resources
    from vault_rag.graph.llm import build_chat_provider

    chosen = settings.model_copy(update={"llm_model": model.strip() or None})
    return replace(resources, llm=build_chat_provider(chosen), settings=chosen)
