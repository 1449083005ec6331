"""One small, non-streaming chat completion against an OpenAI-compatible server, for the
retrieval steps that ask the chat model a bounded question (the listwise re-rank, the query
translation): one client per step, and every failure mapped to the step's own error, so the
caller falls back with a clear reason and nothing fails."""

from __future__ import annotations

from typing import Any

import httpx

OPENAI_URL = "https://api.openai.com/v1"


class ChatCompletionClient:
    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        timeout: float,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url or OPENAI_URL
        self.url = self.base_url.rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {api_key or 'not-needed'}"}
        self._client = httpx.Client(
            timeout=timeout, headers=headers, transport=transport, trust_env=False
        )

    def complete(self, body: dict[str, Any], error: type[Exception]) -> tuple[str, Any]:
        """The reply's message content and the whole response JSON; raises `error` when the
        server times out, cannot be reached, answers other than 200 or not a chat completion."""
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise error("the chat model timed out") from exc
        except httpx.HTTPError as exc:
            raise error(f"the chat model is unreachable ({type(exc).__name__})") from exc
        if response.status_code != 200:
            raise error(f"the chat model answered HTTP {response.status_code}")
        try:
            data = response.json()
            content = data["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise error("the chat model's reply is not a chat completion") from exc
        return str(content), data

    def close(self) -> None:
        self._client.close()
