"""Listwise re-ranking by the configured chat model (any OpenAI-compatible server).

One bounded request per search: at most `max_candidates` passages, each cut so that the whole
prompt stays within `token_budget` (estimated pessimistically, `embeddings.base.estimate_tokens`),
and a reply of at most a few tokens per passage. The model is asked for the passage numbers
that help answer, best first, as ``{"ranking": [3, 1, …]}``; a reply that is only a list of
numbers is read too (small models drop the JSON). Listed passages score above unlisted ones,
which keep their fused order. A reply with no usable number, an HTTP error or a timeout is a
`RerankError` (the search keeps its fused order).

The request is sent with httpx, synchronously, to ``{llm_base_url}/chat/completions`` (the
search runs on worker threads, where the graph's async `ChatProvider` cannot be awaited).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import httpx

from vault_rag.embeddings.base import estimate_tokens
from vault_rag.retrieval.chat_completion import ChatCompletionClient
from vault_rag.retrieval.rerank.base import RerankError, RerankHealth

SYSTEM = (
    "You rank passages from a user's notes by how well they answer the user's question. "
    'Reply with JSON only, exactly {"ranking": [numbers]}: the numbers of the passages that '
    "help answer, the most useful first. Leave out passages that do not help."
)
PROMPT_OVERHEAD = 120  # tokens of instructions, numbering and the chat template
_NUMBER = re.compile(r"\d+")


class LlmReranker:
    kind = "llm"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_candidates: int = 20,
        token_budget: int = 3000,
        temperature: float | None = 0.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self._chat = ChatCompletionClient(base_url, api_key, timeout, transport)
        self.url = self._chat.url
        self.label = f"{model} at {self._chat.base_url} (listwise)"
        self.max_candidates = max_candidates
        self.token_budget = token_budget
        self.temperature = temperature
        self.health = RerankHealth()

    def messages(self, query: str, documents: Sequence[str]) -> list[dict[str, str]]:
        """The prompt: the question, then each passage numbered from 1, cut to fit the budget."""
        shown = list(documents[: self.max_candidates])
        room = self.token_budget - PROMPT_OVERHEAD - estimate_tokens(query)
        each = max(16, room // max(1, len(shown)))
        lines = [f"Question: {query}", "", "Passages:"]
        lines += [f"[{n}] {_fit(text, each)}" for n, text in enumerate(shown, 1)]
        lines += ["", 'Reply {"ranking": [...]} with the numbers of the passages, best first.']
        return [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "\n".join(lines)},
        ]

    def request_body(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        shown = min(len(documents), self.max_candidates)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages(query, documents),
            "max_tokens": 16 + 4 * shown,
            "stream": False,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        content, _ = self._chat.complete(self.request_body(query, documents), RerankError)
        shown = min(len(documents), self.max_candidates)
        ranking = parse_ranking(str(content), shown)
        if not ranking:
            raise RerankError("the chat model's ranking could not be read")
        scores = [0.0] * len(documents)
        for position, number in enumerate(ranking):
            scores[number - 1] = float(len(ranking) - position)
        return scores

    def close(self) -> None:
        self._chat.close()


def parse_ranking(content: str, count: int) -> list[int]:
    """Passage numbers (1-based, each once, within 1..count) in the model's order."""
    numbers: list[Any] = []
    start, end = content.find("{"), content.rfind("}")
    if start != -1 and end > start:
        try:
            data = json.loads(content[start : end + 1])
            value = data.get("ranking") if isinstance(data, dict) else None
            numbers = value if isinstance(value, list) else []
        except ValueError:
            numbers = []
    if not numbers:
        numbers = [int(n) for n in _NUMBER.findall(content)]
    ranking: list[int] = []
    for number in numbers:
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        valid = isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= count
        if valid and number not in ranking:
            ranking.append(number)
    return ranking


def _fit(text: str, tokens: int) -> str:
    """`text` with whitespace collapsed, cut until its estimated tokens fit `tokens`."""
    flat = " ".join(text.split())
    cut = flat[: tokens * 4]
    while cut and estimate_tokens(cut) > tokens:
        cut = cut[: int(len(cut) * 0.8)]
    return cut + ("…" if len(cut) < len(flat) else "")
