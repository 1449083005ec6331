"""Grade the candidates: one batched structured call per aspect scores every candidate 0–1;
those under the threshold are dropped. Without a model the top-scored chunks are kept.

The grader can add, never take away: when it rejects every candidate or its reply cannot be
used, the top hits by retrieval stay; a hit that is strong evidence by retrieval (cosine and
BM25 both, `graph.evidence`) stays whatever grade it got. Those are marked `kept` and go first.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from vault_rag.graph.config import Configuration, get_resources
from vault_rag.graph.evidence import Bars, bars_for, strength_of
from vault_rag.graph.llm import ChatProvider, bounds
from vault_rag.graph.nodes.common import failure_update, progress, usable_model
from vault_rag.graph.nodes.retrieve import docs_for_aspect
from vault_rag.graph.prompts.grade import GRADE_CONTEXT, GRADE_SYSTEM
from vault_rag.graph.sources import format_evidence
from vault_rag.graph.state import Aspect, Doc, State
from vault_rag.graph.usage import Usage, sum_usage


class PassageScore(BaseModel):
    id: int = Field(description="the passage number")
    score: float = Field(description="0 to 1")

    @field_validator("score", mode="before")
    @classmethod
    def _clamp(cls, value: object) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return 0.0
        if number > 1.0:  # "8" on a 0–10 scale, "80" as a percentage
            number = number / 10.0 if number <= 10.0 else number / 100.0
        return min(1.0, max(0.0, number))


class Grades(BaseModel):
    """A relevance score for every passage."""

    scores: list[PassageScore] = Field(
        description="one entry per passage", json_schema_extra=bounds(items=40)
    )


KEEP_TOP = 3  # hits kept by retrieval rank when the grader rejects everything or fails


def guarded(
    candidates: list[Doc], scores: dict[str, float], threshold: float, bars: Bars
) -> list[Doc]:
    """Candidates the grader's scores must not drop (best retrieval rank first), each with
    `kept` saying why."""
    if not any(scores.get(d["id"], 0.0) >= threshold for d in candidates):
        why = "grader rejected every hit" if scores else "grader failed"
        return [{**d, "kept": why} for d in candidates[:KEEP_TOP] if d.get("kind") != "web"]
    return [
        {**d, "kept": "strong retrieval evidence"}
        for d in candidates
        if d.get("kind") != "web"
        and scores.get(d["id"], 0.0) < threshold
        and strength_of(d.get("dense_score"), d.get("lexical_score"), bars) == "strong"
    ]


def rank_candidates(docs: list[Doc]) -> list[Doc]:
    """Best first, vault and web interleaved: their retrieval scores are on different scales,
    so each kind is ranked on its own and the two rankings alternate, vault first. Passages of
    several collections (the vault and sources beside it) are not comparable by score either:
    they keep the routed merge's order (`Doc.rank`; retrieval/routing.py), which a sort by score
    would undo."""
    vault = [d for d in docs if d.get("kind") != "web"]
    if len({d.get("collection", "vault") for d in vault}) > 1:
        vault.sort(key=lambda d: (d.get("rank", len(docs)), -d.get("score", 0.0)))
    else:
        vault.sort(key=lambda d: -d.get("score", 0.0))
    web = sorted((d for d in docs if d.get("kind") == "web"), key=lambda d: -d.get("score", 0.0))
    ranked: list[Doc] = []
    for i in range(max(len(vault), len(web))):
        ranked.extend(kind[i] for kind in (vault, web) if i < len(kind))
    return ranked


async def _grade_aspect(
    model: ChatProvider, aspect: Aspect, candidates: list[Doc], configuration: Configuration
) -> tuple[dict[str, float], Usage]:
    messages = [
        SystemMessage(GRADE_SYSTEM.format(domain=configuration.domain)),
        HumanMessage(
            GRADE_CONTEXT.format(
                question=aspect["question"],
                passages=format_evidence(candidates, limit=configuration.excerpt_chars),
            )
        ),
    ]
    grades, usage = await model.structured(Grades, messages)
    scores: dict[str, float] = {}
    for item in grades.scores:
        if 1 <= item.id <= len(candidates):
            doc_id = candidates[item.id - 1]["id"]
            scores[doc_id] = max(scores.get(doc_id, 0.0), item.score)
    return scores, usage


async def grade(state: State, config: RunnableConfig) -> dict[str, Any]:
    configuration = Configuration.from_runnable_config(config)
    resources = get_resources(config)
    model = usable_model(resources, state.degraded)
    per_aspect = {
        a["index"]: rank_candidates(docs_for_aspect(state.documents, a["index"]))[
            : configuration.grade_candidates
        ]
        for a in state.aspects
    }
    results: list[Any] = [None] * len(state.aspects)
    if model is not None:
        calls = [
            _grade_aspect(model, a, per_aspect[a["index"]], configuration)
            for a in state.aspects
            if per_aspect[a["index"]]
        ]
        graded = iter(await asyncio.gather(*calls, return_exceptions=True))
        results = [next(graded) if per_aspect[a["index"]] else None for a in state.aspects]
    usage: Usage | None = None
    notes: list[str] = []
    degraded = ""
    kept_by_id: dict[str, Doc] = {}
    bars = await asyncio.to_thread(bars_for, configuration, resources)
    for aspect, result in zip(state.aspects, results, strict=True):
        candidates = per_aspect[aspect["index"]]
        if isinstance(result, tuple):
            scores, cost = result
            usage = sum_usage(usage, cost)
            passed = [
                d for d in candidates if scores.get(d["id"], 0.0) >= configuration.grade_threshold
            ]
            passed.sort(key=lambda d: -scores.get(d["id"], 0.0))  # stable: ties keep rank order
            keep = guarded(candidates, scores, configuration.grade_threshold, bars)
            if keep:
                notes.append(
                    f"The grader's verdict was overruled for {len(keep)} search hit(s) "
                    f"({keep[0]['kept']}); they were kept."
                )
                passed = keep + [d for d in passed if d["id"] not in {k["id"] for k in keep}]
        else:
            if isinstance(result, Exception):
                failure = failure_update("grade", result, resources)
                usage = sum_usage(usage, failure["usage"])
                notes += failure.get("notes", [])
                degraded = degraded or failure.get("degraded", "")
            scores, passed = {}, candidates  # deterministic: keep the top-ranked candidates
        limit = max(configuration.docs_per_aspect, sum(bool(d.get("kept")) for d in passed))
        for doc in passed[:limit]:
            kept = kept_by_id.setdefault(doc["id"], {**doc, "aspects": [], "grade": None})
            kept["aspects"] = sorted({*kept["aspects"], aspect["index"]})
            if doc["id"] in scores:
                kept["grade"] = max(kept.get("grade") or 0.0, scores[doc["id"]])
        progress(
            "grade",
            aspect=aspect["index"],
            kept=min(len(passed), limit),
            of=len(candidates),
        )
    update: dict[str, Any] = {"evidence": list(kept_by_id.values())}
    if usage is not None:
        update["usage"] = usage
    if notes:
        update["notes"] = notes
    if degraded:
        update["degraded"] = degraded
    return update
