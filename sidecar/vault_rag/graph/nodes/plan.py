"""Plan the search: domain terms, 1–4 aspects, vault queries and (with web) web queries."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from vault_rag.embeddings.base import EmbeddingError, EmbeddingProvider
from vault_rag.graph.config import Configuration, get_resources
from vault_rag.graph.llm import LLMUnavailable, StructuredOutputError, bounds
from vault_rag.graph.nodes.common import failure_update, progress, usable_model
from vault_rag.graph.prompts.plan import HYDE_RULE, PLAN_CONTEXT, PLAN_SYSTEM, WEB_RULE
from vault_rag.graph.state import Aspect, State
from vault_rag.graph.translation import translation_for
from vault_rag.graph.usage import add_usage
from vault_rag.retrieval.calibration import calibration_for


class PlannedAspect(BaseModel):
    question: str = Field(
        description="this aspect as a short question", json_schema_extra=bounds(chars=200)
    )
    terms: list[str] = Field(
        default_factory=list,
        description="exact technical terms",
        json_schema_extra=bounds(items=8, item_chars=60),
    )
    vault_queries: list[str] = Field(
        default_factory=list,
        description="keyword queries",
        json_schema_extra=bounds(items=3, item_chars=120),
    )
    web_queries: list[str] = Field(
        default_factory=list,
        description="declarative statements",
        json_schema_extra=bounds(items=2, item_chars=160),
    )
    hypothetical_answer: str = Field(
        default="",
        description="a passage that would answer it",
        json_schema_extra=bounds(chars=600),
    )


class Plan(BaseModel):
    """How to search for the answer: one aspect per distinct part of the question."""

    aspects: list[PlannedAspect] = Field(
        description="1 to 4 aspects", json_schema_extra={"minItems": 1, "maxItems": 4}
    )


def _unique(items: list[str], limit: int) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        text = " ".join(str(item).split())
        if text and text.casefold() not in seen:
            seen[text.casefold()] = text
    return list(seen.values())[:limit]


def to_aspects(
    plan: Plan | None,
    question: str,
    configuration: Configuration,
    *,
    related: list[bool] | None = None,
    asked_as: tuple[str, ...] = (),
    translated: str | None = None,
) -> list[Aspect]:
    """Clamp a plan into shape. The model can add, never take away: the question itself (and
    `asked_as`, the user's own wording when the condensed form differs) is always the first
    aspect's first vault queries, outside the per-aspect budget; each aspect then searches with
    its own question, terms and queries. An aspect the embedding model finds unrelated to the
    question (`related[i]` false) falls back to the question; repeated aspects collapse. A
    missing or empty plan becomes one aspect: the question as asked. `translated`, the question
    in the vault's language (`graph/translation.py`), comes right after them, also outside the
    budget."""
    planned = list((plan.aspects if plan else [])[: configuration.max_aspects])
    if related is not None:
        planned = [
            item if i >= len(related) or related[i] else PlannedAspect(question=question)
            for i, item in enumerate(planned)
        ]
    unique: dict[str, PlannedAspect] = {}
    for item in planned:
        unique.setdefault((item.question.strip() or question).casefold(), item)
    planned = list(unique.values()) or [PlannedAspect(question=question)]
    web = configuration.web_mode == "hybrid"
    aspects: list[Aspect] = []
    for index, item in enumerate(planned):
        asked = item.question.strip() or question
        terms = _unique(item.terms, 8)
        vault = [asked, " ".join(terms), *item.vault_queries]
        hyde = item.hypothetical_answer.strip() if configuration.hyde else ""
        queries = _unique(vault, configuration.vault_queries_per_aspect)
        if index == 0:
            given = _unique([question, *asked_as], 2)
            if translated:
                given = _unique([*given, translated], len(given) + 1)
            queries = given + [q for q in queries if q.casefold() not in _folded(given)]
        aspects.append(
            Aspect(
                index=index,
                question=asked,
                terms=terms,
                vault_queries=queries + ([hyde] if hyde else []),
                web_queries=_unique(
                    item.web_queries or [asked], configuration.web_queries_per_aspect
                )
                if web
                else [],
                hyde=hyde,
            )
        )
    return aspects


def _folded(items: list[str]) -> set[str]:
    return {item.casefold() for item in items}


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b)) or 1.0
    return dot / norm


async def relatedness(
    question: str, aspects: list[str], provider: EmbeddingProvider
) -> list[float]:
    """Cosine between the question and each aspect, with the index's embedding model."""

    def embed() -> list[float]:
        base = provider.embed_query(question)
        return [_cosine(base, provider.embed_query(a)) for a in aspects]

    return await asyncio.to_thread(embed)


async def plan(state: State, config: RunnableConfig) -> dict[str, Any]:
    """One structured call; without a model the plan is the question as one aspect."""
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    question = state.standalone_question or state.user_question
    model = usable_model(resources, state.degraded)
    update: dict[str, Any] = {}
    result: Plan | None = None
    # The translation (one bounded call, when the question's script is not the vault's) runs
    # while the planner thinks; it never fails the turn.
    translating = asyncio.create_task(
        translation_for(question, dict(state.translations), resources, model is not None)
    )
    if model is not None:
        system = PLAN_SYSTEM.format(
            domain=configuration.domain,
            max_aspects=configuration.max_aspects,
            max_queries=configuration.vault_queries_per_aspect,
            web_rule=WEB_RULE.format(max_web=configuration.web_queries_per_aspect)
            if configuration.web_mode == "hybrid"
            else "",
            hyde_rule=HYDE_RULE if configuration.hyde else "",
        )
        messages = [SystemMessage(system), HumanMessage(PLAN_CONTEXT.format(question=question))]
        try:
            result, usage = await model.structured(Plan, messages)
            update["usage"] = usage
        except (LLMUnavailable, StructuredOutputError) as exc:
            update.update(failure_update("plan", exc, resources))
        except BaseException:
            translating.cancel()  # the step fails: no translation left running behind it
            raise
    related: list[bool] | None = None
    fallbacks = 0
    if result is not None and result.aspects:
        # An aspect that shares nothing with the question would replace it in the search.
        provider = resources.index.provider
        bar = calibration_for(provider.model_id).aspect_relevance
        wanted = [a.question.strip() or question for a in result.aspects]
        try:
            scores = await relatedness(question, wanted[: configuration.max_aspects], provider)
        except EmbeddingError as exc:  # unchecked aspects could replace the question: drop them
            scores = [0.0] * len(wanted[: configuration.max_aspects])
            update["notes"] = [
                f"The model's search aspects could not be checked against the question ({exc}); "
                "the question itself was searched instead."
            ]
        related = [score >= bar for score in scores]
        fallbacks = related.count(False)
        if fallbacks and "notes" not in update:
            update["notes"] = [
                f"{fallbacks} of the model's search aspects had nothing to do with the question; "
                "the question itself was searched instead."
            ]
    translated, translation_update = await translating
    for key, value in translation_update.items():
        if key == "usage" and "usage" in update:
            update["usage"] = add_usage(update["usage"], value)
        elif key == "notes":
            update["notes"] = [*update.get("notes", []), *value]
        else:
            update[key] = value
    asked_as = (state.user_question,) if state.user_question else ()
    aspects = to_aspects(
        result,
        question,
        configuration,
        related=related,
        asked_as=asked_as,
        translated=translated,
    )
    progress(
        "plan",
        aspects=len(aspects),
        queries=sum(len(a["vault_queries"]) for a in aspects),
        fallbacks=fallbacks,
        translated=bool(translated),
    )
    return {"aspects": aspects, **update}
