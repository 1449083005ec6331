"""One hit of a search: the passage, where it sits (note, heading path, anchor, lines, page or
symbol) and how it scored. Made by `hybrid.py`, refined by `cite.py` and `rerank/`, turned into
API hits and citations above; kept in a module of its own so those can name it without
importing the search itself."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class LinkedUnit:
    """The other half of a note ↔ code pair: the unit a hit links to, and why."""

    kind: str  # "code" (a note hit's symbol) or "note" (a code hit's note naming it)
    collection: str
    note_path: str  # the file (a note, or a source file)
    symbol: str | None  # the code symbol named (qualified)
    line_start: int
    line_end: int
    heading_path: str
    text: str  # the start of the unit (short)
    reason: str  # e.g. `note names DBImpl::Write`


@dataclass
class SearchResult:
    note_path: str  # the note holding this chunk (the origin's own chunk when both matched)
    heading_path: str
    anchor: str
    chunk_id: str
    score: float  # fused RRF score (only comparable within one result list)
    text: str
    origin: str  # note the text was written in
    line_start: int
    line_end: int
    embedded_in: list[str] = field(default_factory=list)  # other notes showing this same text
    dense_score: float | None = None  # cosine similarity, when the dense side found it
    lexical_score: float | None = None  # BM25 score, when the lexical side found it
    base_score: float | None = None  # fused RRF score before the feedback prior
    prior: float = 1.0  # feedback factor: score = base_score × prior (1.0: no feedback / off)
    promoted: bool = False  # the note is a promoted answer (frontmatter `origin: promoted`)
    # Small-to-big: the enclosing section of the matched unit (bounded; `text` when the unit is
    # the whole section), and its lines in `note_path`. Shown and quoted, never cited: the
    # citation stays the unit's own heading_path/anchor/line_start-line_end.
    context: str = ""
    context_line_start: int = 0
    context_line_end: int = 0
    # The source kind (`sources/`): "md", "pdf" or "canvas"; a PDF unit's pages (`anchor` is
    # then `page=N`, so `[[note_path#anchor]]` opens the PDF at that page).
    kind: str = "md"
    page: int | None = None
    page_end: int | None = None
    # The re-ranking stage (retrieval/rerank/): this passage's re-ranker score when it was
    # among the re-scored candidates; `rerank_fallback` says why the fused order stayed.
    rerank_score: float | None = None
    rerank_fallback: str | None = None
    # Where it comes from (`retrieval/collections.py`): "vault" or a source's name; a code
    # unit's symbol (`AMyActor::BeginPlay`), cited as `note_path:line_start-line_end`.
    collection: str = "vault"
    symbol: str | None = None
    # C/C++ `.h`/`.cpp` pairs (`sources/code/pairs.py`): the partner file, and where the header
    # declares this definition (`path:line-line`).
    related_file: str | None = None
    declared_at: str | None = None
    # A web source's page (`sources/web/`): the URL to cite (with `#anchor` when the section's
    # heading has an id in the page's HTML) and the page's title; `heading_path` is the section.
    url: str | None = None
    page_title: str | None = None
    # Added by the graph route (`retrieval/graph_route.py`): why, e.g. `graph: CALLS A::f
    # (confidence 0.90)`. Left out of `to_dict` when None, so other results print as before.
    graph_reason: str | None = None
    # Cross-collection links (`source_indexes/pair_links.py`): a note hit's code symbols, a
    # code hit's notes naming it (at most 3). Left out of `to_dict` when empty, as above.
    linked: list[LinkedUnit] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["graph_reason"] is None:
            del data["graph_reason"]
        if not data["linked"]:
            del data["linked"]
        return data
