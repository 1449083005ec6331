"""The question in the vault's language, for the planner to add as one more vault query.

With a chat model configured (and `translate_queries` on), a question whose script differs from
most of the vault's (`retrieval/translate.py`) is translated once per thread: the outcome is
kept in the thread's state (`State.translations`, question → translation, "" for none), so a
regenerated answer or the same question asked again in the conversation costs no call. Any
failure means no translation, with a note; the turn goes on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from vault_rag.graph.config import Resources
from vault_rag.graph.usage import zero_usage
from vault_rag.retrieval.calibration import calibration_for
from vault_rag.retrieval.translate import translate_question, translator_for

KEEP = 32  # translations remembered per thread (the most recent)


async def translation_for(
    question: str, known: dict[str, str], resources: Resources, model_usable: bool
) -> tuple[str | None, dict[str, Any]]:
    """The translation to search with (None: none) and the state update it makes."""
    if not model_usable or not question.strip():
        return None, {}
    if question in known:  # asked before in this thread, translated or not
        return known[question] or None, {}
    translator = translator_for(resources.settings)
    if translator is None:
        return None, {}
    index = resources.index
    # The vault's script is a sum over the manifest's per-note counts: off the event loop.
    script = await asyncio.to_thread(index.vault_script)
    bar = calibration_for(index.provider.model_id).translation_relevance
    outcome = await asyncio.to_thread(
        translate_question, question, script, translator, index.provider, bar
    )
    if not outcome.asked:  # same script as the vault (or no script): nothing to remember
        return None, {}
    remembered = {**known, question: outcome.text or ""}
    update: dict[str, Any] = {"translations": dict(list(remembered.items())[-KEEP:])}
    usage = zero_usage()
    usage["llm_calls"] = 1
    usage["prompt_tokens"], usage["completion_tokens"] = outcome.tokens
    update["usage"] = usage
    if outcome.text is None:
        update["notes"] = [
            f"The question was not translated into {outcome.language} ({outcome.reason}); "
            "it was searched as asked."
        ]
    return outcome.text, update
