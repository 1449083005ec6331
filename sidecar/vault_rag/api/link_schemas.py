"""The cross-collection link of a search hit (`source_indexes/pair_links.py`), as `/v1/search`
and the MCP tool `search_notes` return it; a module of its own so `schemas.py` stays short."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LinkedHit(BaseModel):
    """The other half of a note ↔ code pair."""

    kind: str = Field(description="`code`: the symbol a note hit names; `note`: a note naming it")
    collection: str = Field(description="`vault`, a notes source or a code source's name")
    note_path: str = Field(description="The linked file: a note, or a source file")
    symbol: str | None = Field(None, description="The code symbol the note names (qualified)")
    line_start: int
    line_end: int
    heading_path: str = Field("", description="The linked unit's heading path or symbol")
    text: str = Field("", description="The start of the linked unit, whitespace collapsed")
    reason: str = Field(description="Why, e.g. `note names DBImpl::Write`")
