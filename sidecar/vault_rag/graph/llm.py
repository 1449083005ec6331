"""The chat model: any OpenAI-compatible server through `ChatOpenAI`, made safe for small models.

Two calls are all the graph needs:

* `ChatProvider.structured(Schema, messages)` — a pydantic object. The output method is chosen
  per server: JSON schema where the server supports it, function calling (a grammar-forced tool
  call on llama.cpp) or JSON mode plus a parser otherwise. In ``auto`` the first rejection of a
  JSON-schema request switches this provider (one per server process, `langgraph dev` or CLI
  run) to function calling for the rest of its life.
  An unparsable reply is re-asked at most `max_repairs` times with the parse error quoted;
  then `StructuredOutputError` — never a loop.
* `ChatProvider.text(messages, on_delta)` — streamed plain text.

Transport failures (server down, timeout, HTTP errors after the client's own retries, a
garbled stream) become `LLMUnavailable`; the nodes then fall back to their deterministic versions.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import httpx
import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from vault_rag.embeddings.base import estimate_tokens
from vault_rag.graph.usage import Usage, usage_of_message, zero_usage
from vault_rag.settings import Settings

StructuredMethod = Literal["auto", "json_schema", "function_calling", "json_mode"]
T = TypeVar("T", bound=BaseModel)


class LLMError(RuntimeError):
    """A model call that failed; `usage` still counts the attempts it made."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage: Usage = usage or zero_usage()


class LLMUnavailable(LLMError):
    """The model server could not be reached or refused the request."""


class StructuredOutputError(LLMError):
    """The model's reply could not be parsed into the schema, even after the repair re-asks."""


@dataclass
class ChatProvider:
    make_model: Callable[[], BaseChatModel]
    method: StructuredMethod = "auto"
    max_repairs: int = 1
    server: str = "default"  # the server's base URL
    label: str = ""  # shown in notes: "model at URL"
    # The server rejected a JSON-schema request: remembered by this provider (not the process,
    # so two providers for one URL, e.g. in tests, never share it); the probe costs one failed
    # request per provider, not one per call.
    _schema_rejected: bool = field(default=False, init=False, repr=False)
    _models: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, BaseChatModel] = field(
        default_factory=weakref.WeakKeyDictionary, init=False, repr=False
    )

    @property
    def model(self) -> BaseChatModel:
        """The chat model for the running event loop. HTTP connections belong to the loop that
        opened them, so a provider reused under a new loop (one `asyncio.run` per CLI question,
        tests) gets a fresh client instead of "Event loop is closed"."""
        loop = asyncio.get_running_loop()
        model = self._models.get(loop)
        if model is None:
            model = self._models[loop] = self.make_model()
        return model

    def structured_method(self) -> Literal["json_schema", "function_calling", "json_mode"]:
        if self.method != "auto":
            return self.method
        return "function_calling" if self._schema_rejected else "json_schema"

    async def structured(self, schema: type[T], messages: Sequence[BaseMessage]) -> tuple[T, Usage]:
        """One structured call, plus at most `max_repairs` re-asks. Returns the parsed object
        and what it cost; raises `StructuredOutputError` or `LLMUnavailable`."""
        usage = zero_usage()
        history = list(messages)
        attempts = 0
        while True:
            method = self.structured_method()
            prompt = _with_schema_hint(history, schema) if method == "json_mode" else history
            runnable = self.model.with_structured_output(schema, method=method, include_raw=True)
            first = usage["llm_calls"] == 0
            usage["llm_calls" if first else "repair_retries"] += 1
            try:
                out = await runnable.ainvoke(prompt)
            except (
                openai.BadRequestError,
                openai.UnprocessableEntityError,
                openai.InternalServerError,
            ) as exc:
                if self.method == "auto" and method == "json_schema":
                    self._schema_rejected = True  # e.g. llama.cpp: json_object only
                    continue
                raise LLMUnavailable(_describe(exc), usage) from exc
            except (ValidationError, OutputParserException, json.JSONDecodeError) as exc:
                out = {"raw": None, "parsed": None, "parsing_error": exc}
            except (openai.APIError, httpx.HTTPError) as exc:
                raise LLMUnavailable(_describe(exc), usage) from exc
            prompt_tokens, completion_tokens = usage_of_message(out.get("raw"))
            usage["prompt_tokens"] += prompt_tokens
            usage["completion_tokens"] += completion_tokens
            parsed = out.get("parsed")
            if isinstance(parsed, schema):
                return parsed, usage
            if attempts >= self.max_repairs:
                raise StructuredOutputError(
                    f"the model's reply did not match {schema.__name__} after "
                    f"{attempts + 1} attempt(s): {_short(out.get('parsing_error'))}",
                    usage,
                )
            attempts += 1
            history = [*list(messages), _repair_request(schema, out)]

    async def text(
        self, messages: Sequence[BaseMessage], on_delta: Callable[[str], None] | None = None
    ) -> tuple[str, Usage]:
        """Plain text, streamed piece by piece to `on_delta`."""
        usage = zero_usage()
        usage["llm_calls"] = 1
        parts: list[str] = []
        final: Any = None
        try:
            async for chunk in self.model.astream(list(messages)):
                piece = chunk.content if isinstance(chunk.content, str) else ""
                if piece:
                    parts.append(piece)
                    if on_delta is not None:
                        on_delta(piece)
                final = chunk if final is None else final + chunk
        except (openai.APIError, httpx.HTTPError) as exc:
            raise LLMUnavailable(_describe(exc), usage) from exc
        except json.JSONDecodeError as exc:  # a garbled or truncated stream chunk
            raise LLMUnavailable(
                f"the model server sent an unreadable reply ({_short(exc)})", usage
            ) from exc
        except TimeoutError as exc:  # langchain-openai's StreamChunkTimeoutError: no content
            raise LLMUnavailable("the model server timed out", usage) from exc
        prompt_tokens, completion_tokens = usage_of_message(final)
        if not prompt_tokens and not completion_tokens:
            # Some servers (llama-cpp-python) send no usage while streaming: estimate it, one
            # token per streamed piece and a pessimistic count for the prompt, and say so.
            prompt_tokens = sum(estimate_tokens(m.text) for m in messages)
            completion_tokens = len(parts)
            usage["estimated_calls"] = 1
        usage["prompt_tokens"], usage["completion_tokens"] = prompt_tokens, completion_tokens
        return "".join(parts), usage


def bounds(
    *, chars: int | None = None, items: int | None = None, item_chars: int | None = None
) -> dict[str, Any]:
    """JSON-schema size limits for a field (`json_schema_extra`): a hint to large models and,
    where the server turns the schema into a grammar (llama.cpp), a hard stop for a small model
    that rambles until `max_tokens` cuts its JSON in half. Pydantic does not enforce them."""
    extra: dict[str, Any] = {}
    if chars is not None:
        extra["maxLength"] = chars
    if items is not None:
        extra["maxItems"] = items
    if item_chars is not None:
        extra["items"] = {"type": "string", "maxLength": item_chars}
    return extra


def build_chat_provider(settings: Settings) -> ChatProvider | None:
    """The configured chat model, or None when no model is configured."""
    if not settings.llm_model:
        return None
    from langchain_openai import ChatOpenAI

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    options: dict[str, Any] = {}
    if settings.llm_base_url:
        # Local servers want no key but the client insists on one; they also ignore
        # max_completion_tokens (llama.cpp), so the limit goes as the classic max_tokens.
        options["api_key"] = key or "not-needed"
        options["extra_body"] = {"max_tokens": settings.llm_max_tokens}
    else:
        if key:
            options["api_key"] = key
        options["max_completion_tokens"] = settings.llm_max_tokens
    if settings.llm_temperature is not None:
        options["temperature"] = settings.llm_temperature

    def make_model() -> BaseChatModel:
        return ChatOpenAI(
            model=settings.llm_model,
            base_url=settings.llm_base_url,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            stream_usage=True,
            # langchain-openai gives up on a stream that sends no content for 120 s, whatever
            # the timeout: a small local model reading a long prompt on a slow CPU takes longer
            # to its first token. The configured timeout is the one limit.
            stream_chunk_timeout=settings.llm_timeout,
            # Our own client, not langchain-openai's process-wide cached one (see `model`).
            http_async_client=httpx.AsyncClient(timeout=settings.llm_timeout),
            **options,
        )

    server = settings.llm_base_url or "https://api.openai.com/v1"
    return ChatProvider(
        make_model=make_model,
        method=settings.llm_structured_method,
        max_repairs=settings.llm_max_repairs,
        server=server,
        label=f"{settings.llm_model} at {server}",
    )


def _with_schema_hint(messages: list[BaseMessage], schema: type[BaseModel]) -> list[BaseMessage]:
    """JSON mode only promises *some* JSON object: spell out the wanted shape."""
    hint = SystemMessage(
        "Reply with one JSON object only, no prose, matching this JSON schema:\n"
        + json.dumps(schema.model_json_schema(), ensure_ascii=False)
    )
    return [*messages, hint]


def _repair_request(schema: type[BaseModel], out: dict[str, Any]) -> HumanMessage:
    raw = out.get("raw")
    said = ""
    if raw is not None:
        calls = getattr(raw, "tool_calls", None) or []
        said = json.dumps(calls[0]["args"], ensure_ascii=False) if calls else str(raw.content)
    return HumanMessage(
        f"Your previous reply could not be used ({_short(out.get('parsing_error'))}). "
        f"It was: {said[:500]!r}. Reply again with exactly the fields of {schema.__name__}, "
        "as valid JSON, nothing else."
    )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "the model server timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "the model server is unreachable"
    if isinstance(exc, openai.APIStatusError):
        return f"the model server answered HTTP {exc.status_code}: {_short(exc.message)}"
    return _short(exc)


def _short(value: object, limit: int = 200) -> str:
    text = " ".join(str(value or "no structured output").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
