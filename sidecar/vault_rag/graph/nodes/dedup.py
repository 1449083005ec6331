"""De-duplicate the evidence by embedding: near-identical texts (the same passage reached by
several aspects, a note and a note that embeds part of it, a web page quoting the docs) merge
into one document that keeps every source. The threshold is calibrated per embedding model."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from langchain_core.runnables import RunnableConfig

from vault_rag.graph.config import Configuration, get_resources
from vault_rag.graph.nodes.common import progress
from vault_rag.graph.sources import citation_of
from vault_rag.graph.state import Doc, State
from vault_rag.retrieval.calibration import calibration_for


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def merge_near_duplicates(
    docs: list[Doc], vectors: list[list[float]], threshold: float
) -> tuple[list[Doc], int]:
    """Greedy, best first: each document joins the first kept one it is at least `threshold`
    similar to, else it is kept. Returns the kept documents and how many merged."""
    order = sorted(range(len(docs)), key=lambda i: (-(docs[i].get("grade") or 0.0), i))
    kept: list[tuple[Doc, list[float]]] = []
    merged = 0
    for i in order:
        doc, vector = docs[i], _unit(vectors[i])
        twin = next((k for k, kv in kept if cosine(vector, kv) >= threshold), None)
        if twin is None:
            kept.append(({**doc, "also": list(doc.get("also", []))}, vector))  # type: ignore[typeddict-item]
            continue
        merged += 1
        twin["aspects"] = sorted({*twin.get("aspects", []), *doc.get("aspects", [])})
        if (doc.get("grade") or 0.0) > (twin.get("grade") or 0.0):
            twin["grade"] = doc.get("grade")
        twin["also"] = [*twin.get("also", []), citation_of(doc), *doc.get("also", [])]
    return [doc for doc, _ in kept], merged


async def deduplicate(state: State, config: RunnableConfig) -> dict[str, Any]:
    configuration = Configuration.from_runnable_config(config)
    provider = get_resources(config).index.provider
    docs = state.evidence
    if len(docs) < 2:
        progress("deduplicate", kept=len(docs), merged=0)
        return {}
    threshold = configuration.dedup_threshold
    if threshold is None:
        threshold = calibration_for(provider.model_id).dedup
    # The chunk text alone, without the title header the index embeds: two notes showing the
    # same passage differ only in that header.
    vectors = await asyncio.to_thread(provider.embed_documents, [d["text"] for d in docs])
    kept, merged = merge_near_duplicates(docs, vectors, threshold)
    progress("deduplicate", kept=len(kept), merged=merged)
    return {"evidence": kept}
