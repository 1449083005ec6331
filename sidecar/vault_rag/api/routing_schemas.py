"""Schemas of the routing decision a search over several collections reports (issue 43;
`retrieval/routing.py`)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class CollectionRouting(BaseModel):
    name: str = Field(description="`vault` or a source's name")
    weight: float = Field(
        description="Its share of the merge: a result of rank r is placed at (r + 1) / weight, "
        "so weight 2 fills two places for each one of a weight-1 collection; 1 means no evidence"
    )
    reasons: list[str] = Field(
        description="Why its weight was raised: e.g. `identifier DBImpl::Write`, `code words`"
    )
    dense_key: float | None = Field(
        None, description="Its best cosine in standard deviations above chance (calibrated)"
    )
    lexical_key: float | None = Field(None, description="Its best BM25 ÷ ln(passages)")


class SearchRouting(BaseModel):
    searched: list[str] = Field(description="The collections searched, in their order")
    collections: list[CollectionRouting]
