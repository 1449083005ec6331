"""Plan the search: domain terms, 1–4 aspects, vault queries and (with web) web queries."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from vault_rag.graph.config import Configuration, get_resources
from vault_rag.graph.llm import LLMUnavailable, StructuredOutputError, bounds
from vault_rag.graph.nodes.common import failure_update, progress, usable_model
from vault_rag.graph.prompts.plan import HYDE_RULE, PLAN_CONTEXT, PLAN_SYSTEM, WEB_RULE
from vault_rag.graph.state import Aspect, State


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


def to_aspects(plan: Plan | None, question: str, configuration: Configuration) -> list[Aspect]:
    """Clamp a plan into shape. Whatever the model wrote, every aspect searches the vault with
    its own question first (hybrid search handles whole questions well), then the model's terms
    and queries; a missing or empty plan becomes one aspect: the question as asked."""
    planned = (plan.aspects if plan else [])[: configuration.max_aspects] or [
        PlannedAspect(question=question)
    ]
    web = configuration.web_mode == "hybrid"
    aspects: list[Aspect] = []
    for index, item in enumerate(planned):
        asked = item.question.strip() or question
        terms = _unique(item.terms, 8)
        vault = [asked, " ".join(terms), *item.vault_queries]
        hyde = item.hypothetical_answer.strip() if configuration.hyde else ""
        aspects.append(
            Aspect(
                index=index,
                question=asked,
                terms=terms,
                vault_queries=_unique(vault, configuration.vault_queries_per_aspect)
                + ([hyde] if hyde else []),
                web_queries=_unique(
                    item.web_queries or [asked], configuration.web_queries_per_aspect
                )
                if web
                else [],
                hyde=hyde,
            )
        )
    return aspects


async def plan(state: State, config: RunnableConfig) -> dict[str, Any]:
    """One structured call; without a model the plan is the question as one aspect."""
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    question = state.standalone_question or state.user_question
    model = usable_model(resources, state.degraded)
    update: dict[str, Any] = {}
    result: Plan | None = None
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
    aspects = to_aspects(result, question, configuration)
    progress("plan", aspects=len(aspects), queries=sum(len(a["vault_queries"]) for a in aspects))
    return {"aspects": aspects, **update}
