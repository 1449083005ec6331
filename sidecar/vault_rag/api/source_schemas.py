"""Schemas of `/v1/sources` (add or remove a source beside the vault; issue 42)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SourceAdd(BaseModel):
    name: str = Field(description="Its collection name: a-z, 0-9, _ and -, at most 32")
    kind: Literal["code", "vault", "markdown", "web"] = Field(
        description="code (a source tree), vault (another vault), markdown, or web (online docs)"
    )
    path: str | None = Field(
        None, description="The folder on the sidecar's machine (absolute); not for `web`"
    )
    url: str | None = Field(
        None, description="`web`: the http(s) start URL; the crawl stays under its folder"
    )
    include: list[str] = Field(
        default_factory=list, description="Only these (gitignore-style; web: URL paths)"
    )
    exclude: list[str] = Field(
        default_factory=list, description="Leave these out (gitignore-style; web: URL paths)"
    )
    max_pages: int | None = Field(
        None, ge=1, description="`web`: keep at most this many pages (default: web_max_pages)"
    )


class SourceAdded(BaseModel):
    name: str
    kind: Literal["code", "vault", "markdown", "web"]
    path: str = Field(description="Its folder; a web source's start URL (normalised)")
    include: list[str]
    exclude: list[str]
    max_pages: int | None = None
    indexing: bool = Field(
        description="Its first index run (a web source: crawl, then index) has started on the "
        "server; `GET /v1/collections` shows it `indexed` once done (`scanning` until then)"
    )
    next: str = Field(description="What happens next, in a sentence for the user")


class SourceRemoved(BaseModel):
    name: str
    removed_index: bool = Field(description="It had an index, now deleted (its folder is kept)")
