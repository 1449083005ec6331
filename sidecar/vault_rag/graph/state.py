"""The answer graph's state: what a question carries from node to node.

Everything stored here is plain data (dicts, lists, strings, LangChain messages) so the SQLite
checkpointer can persist a thread without custom serialisers. Fields that parallel tasks write
(`documents`, `aspect_answers`, `failures`, `degraded`, `notes`, `usage`) have explicit reducers
that accumulate within a turn.

A turn starts empty: the first node (`take_question`) writes each accumulator's empty value
(`[]`, `""`, zero usage), and the reducer takes an empty write as "start over". So nothing
leaks from one question into the next, and what a client streams (`stream_mode="updates"`,
LangGraph Studio) is always of the field's own type: no private "clear" markers and no
LangGraph `Overwrite` wrappers (which reach JSON clients as `{"value": ..., "type":
"__overwrite__"}`). The rule for every other node: write an accumulator only with something in
it (an empty write would wipe what the turn's parallel tasks gathered).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict  # pydantic on Python 3.11 needs this one

from vault_rag.graph.usage import Usage, add_usage, zero_usage

Intent = Literal["on_topic", "chitchat", "off_topic", "unsafe"]


class Aspect(TypedDict):
    """One part of the question, answered on its own and then synthesised."""

    index: int  # 0-based position in the plan
    question: str
    terms: list[str]  # domain terms the colloquial wording maps to
    vault_queries: list[str]
    web_queries: list[str]  # declarative statements, as a search engine likes them
    hyde: str  # hypothetical answer passage ("" when HyDE is off)


class Doc(TypedDict, total=False):
    """A candidate piece of evidence: a vault chunk or a web page extract."""

    id: str  # chunk id, or md5 of the URL for web documents
    kind: Literal["vault", "web"]
    aspects: list[int]  # the aspects whose queries found it
    text: str
    score: float  # retrieval score (RRF for vault, Tavily's for web); comparable per kind only
    # vault: its place in the list of the search that found it (0 first; the best over the
    # turn's queries). Across collections only this order compares (the routed merge's).
    rank: int
    dense_score: float | None  # cosine similarity to the query, when the dense side found it
    lexical_score: float | None  # BM25 score for the query, when the lexical side found it
    kept: str  # why grading kept it against the grader ("" or absent: the grader passed it)
    grade: float | None  # 0–1 from the grader; None when not graded
    cite: str  # how the answer cites it: [[note#heading]] or the URL
    # vault
    note_path: str
    heading: str  # heading path, "A > B"
    anchor: str
    chunk_id: str
    origin: str
    line_start: int
    line_end: int
    embedded_in: list[str]
    context: str  # small-to-big: the unit's enclosing section (bounded), shown to the model
    collection: str  # "vault" or a source's name (retrieval/collections.py)
    symbol: str  # code: the function, method, class or struct; cited `path:line-line`
    source_kind: str  # the file's kind: md, pdf, canvas or code (a code unit is quoted whole)
    related_file: str  # C/C++: the other file of the .h/.cpp pair ("" when none)
    declared_at: str  # C/C++: where the header declares this definition (`path:line-line`)
    # A pair question's note ↔ code links (`source_indexes/pair_links.py`): the units this
    # passage links to (`LinkedUnit` as dicts); carried into its citation for the pane.
    linked: list[dict[str, Any]]
    # web
    url: str
    title: str
    # near-duplicates merged into this one (their own citation fields)
    also: list[dict[str, Any]]


class Focus(TypedDict, total=False):
    """The note a question is asked about, resolved for the turn (`graph/focus.py`)."""

    path: str  # vault-relative
    linked: list[str]  # its linked notes the index has (both directions)
    selection: str  # the text selected in it, whitespace collapsed ("" when none)
    indexed: bool  # the index has the note; retrieval can only prefer a note it has


class AspectAnswer(TypedDict):
    aspect: int
    question: str
    text: str
    doc_ids: list[str]  # the evidence it was given
    quoted_ids: list[str]  # the documents an extractive answer quoted ([] if the model wrote it)


class TaskFailure(TypedDict):
    """A parallel task (`Send`) that raised: the turn goes on without it (`check_evidence` and
    `synthesize` decide whether enough is left to answer)."""

    node: str  # retrieve_vault, web_search or answer_aspect
    aspect: int
    query: str  # the search query ("" for an answer)
    error: str  # "ExceptionType: message"


def starts_over(new: object) -> bool:
    """An empty write (`take_question`'s) empties an accumulator instead of adding nothing."""
    return new is not None and not new


def merge_documents(existing: list[Doc] | None, new: list[Doc] | None) -> list[Doc]:
    """Reducer for retrieval fan-in: same id ⇒ one document (aspects united, best score and
    rank kept)."""
    if starts_over(new):
        return []
    merged = [dict(d) for d in existing or []]
    by_id = {d["id"]: d for d in merged}
    for doc in new or []:
        kept = by_id.get(doc["id"])
        if kept is None:
            copy = dict(doc)
            merged.append(copy)  # type: ignore[arg-type]
            by_id[doc["id"]] = copy
            continue
        kept["aspects"] = sorted(set(kept.get("aspects", [])) | set(doc.get("aspects", [])))
        kept["score"] = max(kept.get("score", 0.0), doc.get("score", 0.0))
        if "rank" in doc:
            kept["rank"] = min(kept.get("rank", doc["rank"]), doc["rank"])
        for side in ("dense_score", "lexical_score"):
            if (doc.get(side) or 0.0) > (kept.get(side) or 0.0):
                kept[side] = doc[side]  # type: ignore[literal-required]
    return merged  # type: ignore[return-value]


def merge_aspect_answers(
    existing: list[AspectAnswer] | None, new: list[AspectAnswer] | None
) -> list[AspectAnswer]:
    """Reducer for the answer fan-in: one answer per aspect, in plan order."""
    if starts_over(new):
        return []
    by_aspect = {a["aspect"]: a for a in existing or []}
    for answer in new or []:
        by_aspect[answer["aspect"]] = answer
    return [by_aspect[k] for k in sorted(by_aspect)]


def first_reason(existing: str | None, new: str | None) -> str:
    """Reducer for `degraded`: the first failure reason of a turn wins (parallel tasks may
    both report one)."""
    if starts_over(new):
        return ""
    return existing or new or ""


def add_notes(existing: list[str] | None, new: list[str] | None) -> list[str]:
    """Reducer for user-facing notes ("no web key configured", ...): de-duplicated, in order."""
    if starts_over(new):
        return []
    return list(dict.fromkeys([*(existing or []), *(new or [])]))


def add_failures(
    existing: list[TaskFailure] | None, new: list[TaskFailure] | None
) -> list[TaskFailure]:
    """Reducer for failed parallel tasks: in the order they were reported."""
    if starts_over(new):
        return []
    return [*(existing or []), *(new or [])]


@dataclass(kw_only=True)
class InputState:
    """What a caller sends: a chat turn (`messages`, as agent-chat-ui does) or a `question`."""

    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    question: str = ""
    # Ask about a note: {"path", "selection", "links"} (`POST /v1/ask` `note`); for this turn only.
    note: dict[str, Any] | None = None


@dataclass(kw_only=True)
class State(InputState):
    # the turn
    user_question: str = ""  # taken from `question` or the last human message
    from_messages: bool = False  # the human message is already in `messages`
    intent: Intent | None = None
    focus: Focus | None = None  # the note this turn is asked about (from `note`), if any
    reply: str = ""  # the short reply for chitchat / declined questions
    # conversation memory (persists across turns of a thread)
    summary: str = ""
    # question -> its translation into the vault's language ("" when it got none): one call per
    # question per thread (graph/translation.py)
    translations: dict[str, str] = field(default_factory=dict)
    # understanding
    standalone_question: str = ""
    aspects: list[Aspect] = field(default_factory=list)
    # evidence
    documents: Annotated[list[Doc], merge_documents] = field(default_factory=list)
    web_searched: bool = False  # the weak-evidence web search already ran this turn
    web_aspects: list[int] = field(default_factory=list)  # aspects to search the web for now
    evidence: list[Doc] = field(default_factory=list)  # graded and de-duplicated
    failures: Annotated[list[TaskFailure], add_failures] = field(default_factory=list)
    # answer
    aspect_answers: Annotated[list[AspectAnswer], merge_aspect_answers] = field(
        default_factory=list
    )
    answer: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    answer_id: str = ""
    # bookkeeping
    degraded: Annotated[str, first_reason] = ""  # why the model is not used any more this turn
    notes: Annotated[list[str], add_notes] = field(default_factory=list)
    usage: Annotated[Usage, add_usage] = field(default_factory=zero_usage)


@dataclass(kw_only=True)
class OutputState:
    """What a run returns (and what `vault-rag ask --json` reports)."""

    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    answer: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    aspects: list[Aspect] = field(default_factory=list)
    intent: Intent | None = None
    answer_id: str = ""
    focus: Focus | None = None  # the note the question was asked about, if any
    notes: Annotated[list[str], add_notes] = field(default_factory=list)
    usage: Annotated[Usage, add_usage] = field(default_factory=zero_usage)
