"""Cross-language questions: the question translated into the vault's language, as one more query.

A Chinese question over English notes finds little: BM25 has no word in common with the notes
and the bundled embedding model alone ranks the right note lower (docs/retrieval.md). With a
chat model configured, `translate_question` asks it, in one bounded request, for the question
in the vault's language, when the question's script (`text_scripts`) differs from the one
most of the vault's text is written in (`VaultIndex.vault_script`, counted at index time).

What comes back is used only when it looks like a translation: written in the vault's script,
not the question again, and related to the question by the index's embedding model (a bar
calibrated per model: `translation_relevance`, `retrieval/calibration.py`). A timeout, an HTTP
error or a reply that fails these checks means no translation, with the reason; nothing fails.
The caller keeps the original question as the first query and adds the translation after it.

The request is sent with httpx, synchronously, to ``{llm_base_url}/chat/completions`` (the
eval harness calls it in a plain loop, the graph on a worker thread), with ``max_tokens`` (local
servers ignore OpenAI's ``max_completion_tokens``) and a timeout of its own.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

import httpx

from vault_rag.chunking.text_scripts import LANGUAGES, script_counts, script_of
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.retrieval.chat_completion import ChatCompletionClient
from vault_rag.settings import Settings

SYSTEM = (
    "You translate the question a user asks about their notes into {language}. Reply with the "
    "{language} translation only, on one line: no explanation, no quotes. Keep names of apps, "
    "features and code as they are."
)
MAX_REPLY_CHARS = 600  # a reply longer than this is not a translation of a question


class TranslateError(RuntimeError):
    """The chat model could not be asked or gave no usable reply."""


@dataclass(frozen=True)
class Translation:
    """The outcome for one question: `text` to search as well, or None and `reason`."""

    text: str | None
    reason: str = ""  # why there is none ("" when there is one)
    language: str = ""  # the language asked for ("" when none was asked)
    asked: bool = False  # a request was sent
    tokens: tuple[int, int] = (0, 0)  # prompt and completion tokens the server reported
    reply: str = ""  # what the model said (cleaned), used or not

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "reason": self.reason,
            "language": self.language,
            "asked": self.asked,
            "reply": self.reply,
        }


class QueryTranslator:
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 15.0,
        max_tokens: int = 96,
        temperature: float | None = 0.0,
        language: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self._chat = ChatCompletionClient(base_url, api_key, timeout, transport)
        self.url = self._chat.url
        self.label = f"{model} at {self._chat.base_url}"
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.language = language  # the `translate_to` setting: overrides the script's language

    def request_body(self, question: str, language: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM.format(language=language)},
                {"role": "user", "content": question},
            ],
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def translate(self, question: str, language: str) -> tuple[str, tuple[int, int]]:
        """The model's reply, cleaned (first line, no quotes), and the prompt and completion
        tokens the server reported; raises `TranslateError`."""
        content, data = self._chat.complete(self.request_body(question, language), TranslateError)
        usage = data.get("usage") if isinstance(data, dict) else None
        tokens = (0, 0)
        if isinstance(usage, dict):
            tokens = (
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
            )
        return clean_reply(str(content)), tokens

    def close(self) -> None:
        self._chat.close()


def clean_reply(content: str) -> str:
    """The first non-empty line, without a "Translation:" label or surrounding quotes."""
    for line in content.splitlines():
        text = " ".join(line.split())
        if not text:
            continue
        head, sep, rest = text.partition(":")
        if sep and head.casefold() in {"translation", "english", "chinese", "翻译", "译文"}:
            text = rest.strip()
        return text.strip("\"'“”「」 ")[:MAX_REPLY_CHARS]
    return ""


def wanted_language(question: str, vault_script: str | None, override: str | None) -> str | None:
    """The language to translate `question` into, or None when its script is the vault's
    (or either is unknown: no text, or no script holds a majority)."""
    asked = script_of(question)
    if asked is None or vault_script is None or asked == vault_script:
        return None
    return override or LANGUAGES.get(vault_script)


# Scripts counted per character (`text_scripts`): a question in one of them takes fewer units
# than its translation into a script counted per word, and the other way round.
CHAR_SCRIPTS = frozenset({"han", "kana", "japanese", "hangul", "thai"})
# A translation's units against its question's, at most: twice the usual ratio (51 hand-written
# translations, docs/retrieval.md: Chinese to English 0.55–0.93, English to Chinese 0.94–1.86).
# A small model that answers the question instead of translating it writes far more.
LENGTH_RATIO = {(True, False): 1.5, (False, True): 3.0}
MIN_UNITS = 4  # very short questions get room for a few words more


def units(text: str) -> int:
    return sum(script_counts(text).values())


def longest_translation(question: str, target_script: str) -> float:
    """The most units a translation of `question` into `target_script` may take."""
    source = script_of(question)
    key = (source in CHAR_SCRIPTS, target_script in CHAR_SCRIPTS)
    return LENGTH_RATIO.get(key, 2.0) * max(units(question), MIN_UNITS)


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b)) or 1.0
    return dot / norm


def translate_question(
    question: str,
    vault_script: str | None,
    translator: QueryTranslator | None,
    provider: EmbeddingProvider,
    relevance_bar: float,
) -> Translation:
    """The translation to search with besides `question`, or why there is none."""
    if translator is None:
        return Translation(None, "no chat model")
    language = wanted_language(question, vault_script, translator.language)
    if language is None:
        return Translation(None, "the question is in the vault's script")
    assert vault_script is not None
    try:
        reply, tokens = translator.translate(question, language)
    except TranslateError as exc:
        return Translation(None, str(exc), language, asked=True)

    def refused(reason: str) -> Translation:
        return Translation(None, reason, language, asked=True, tokens=tokens, reply=reply)

    if not reply:
        return refused("the reply was empty")
    if script_of(reply) != vault_script:
        return refused(f"the reply is not in {language}")
    if reply.casefold() == question.strip().casefold():
        return refused("the reply repeats the question")
    if units(reply) > longest_translation(question, vault_script):
        return refused("the reply is too long for a translation")
    similarity = _cosine(provider.embed_query(question), provider.embed_query(reply))
    if similarity < relevance_bar:
        return refused(f"the reply is unrelated to the question ({similarity:.2f})")
    return Translation(reply, "", language, asked=True, tokens=tokens, reply=reply)


_lock = threading.Lock()
_built: dict[tuple[object, ...], QueryTranslator] = {}


def translator_for(settings: Settings) -> QueryTranslator | None:
    """The process's translator for these settings (built once), or None: no chat model, or
    `translate_queries` off."""
    if not settings.llm_model or not settings.translate_queries:
        return None
    key_text = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    key = (
        settings.llm_model,
        settings.llm_base_url,
        key_text,
        settings.translate_timeout,
        settings.translate_max_tokens,
        settings.llm_temperature,
        settings.translate_to,
    )
    with _lock:
        if key not in _built:
            _built[key] = QueryTranslator(
                settings.llm_model,
                settings.llm_base_url,
                key_text,
                timeout=settings.translate_timeout,
                max_tokens=settings.translate_max_tokens,
                temperature=settings.llm_temperature,
                language=settings.translate_to,
            )
        return _built[key]
