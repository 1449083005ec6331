"""Request and response bodies of the HTTP API (exported to shared-schemas/openapi.json)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

# The answer stream's event models live with the graph that emits them (`graph/events.py`);
# re-exported here with the rest of the HTTP contract.
from vault_rag.api.link_schemas import LinkedHit as LinkedHit
from vault_rag.api.routing_schemas import SearchRouting
from vault_rag.graph.events import CitationsEvent as CitationsEvent
from vault_rag.graph.events import DeltaEvent as DeltaEvent
from vault_rag.graph.events import ErrorEvent as ErrorEvent
from vault_rag.graph.events import FinalEvent as FinalEvent
from vault_rag.graph.events import ProgressEvent as ProgressEvent
from vault_rag.graph.events import Usage as Usage


def _encodable(text: str) -> str:
    # JSON may carry lone surrogates ("\ud800"); they cannot be stored or hashed as UTF-8.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text is not valid Unicode (lone surrogate)") from exc
    return text


MAX_NOTE_CHARS = 8 * 1024 * 1024
Text = Annotated[str, AfterValidator(_encodable)]
NotePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1024,
        description="Vault-relative path with forward slashes, e.g. `Rendering/Lumen.md`. "
        "Absolute paths and `..` are refused with 400.",
    ),
    AfterValidator(_encodable),
]
ThreadId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,128}$")]


class ApiModel(BaseModel):
    # No NaN or ±Infinity (JSON extensions Python accepts; `1e400` overflows to Infinity).
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ErrorBody(BaseModel):
    code: str = Field(description="Stable machine-readable word, e.g. `unauthorized`.")
    message: str = Field(description="For people.")
    detail: Any = None


# -- health / status ---------------------------------------------------------------------------
class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    api: Literal["v1"] = "v1"
    proof: str | None = Field(
        None,
        description="With `?challenge=`: hex HMAC-SHA256 keyed by the token over "
        "`vault-rag/health/v1\\n` + the challenge",
    )


class WriterState(BaseModel):
    state: str = Field(description="starting, idle, writing, embedding, backoff or stopped")
    job: str | None
    phase: str | None = Field(
        description="chunking, embedding or sections (the sections of merged units, for precise "
        "citations), with `done` of `total`"
    )
    done: int
    total: int
    queued: int = Field(description="Write jobs waiting (posted notes, disk batches)")
    reconciled: bool = Field(description="The start-up scan of the vault has been applied")
    disk_batches: int
    chunks_embedded: int
    chunks_reused: int


class NoteState(BaseModel):
    path: str
    indexed: bool
    file_hash: str | None = None
    content_hash: str | None = Field(None, description="As in `GET /v1/notes/hashes`")
    chunks: int = 0
    embedded: int = 0
    pending: int = 0
    warnings: list[dict[str, Any]] = Field(default_factory=list)


class AskCounts(BaseModel):
    running: int
    completed: int
    cancelled: int
    failed: int


class VectorStoreState(BaseModel):
    kind: str = Field(description="chroma, chroma-http or milvus (the `vector_store` setting)")
    collection: str = Field(description="Named per vault and embedding model on servers")
    location: str = Field(description="Folder, server URL or Milvus Lite file")
    reachable: bool = Field(description="False while the store cannot be reached (BM25 serves)")
    error: str | None = Field(description="Why it cannot be reached, and what to check")


class RerankState(BaseModel):
    kind: Literal["none", "http", "llm"]
    label: str | None = Field(None, description="Model and address of the re-ranker")
    calls: int = Field(0, description="Searches that asked the re-ranker (this process)")
    fallbacks: int = Field(0, description="…of which kept the fused order (error, timeout)")
    last_ok: bool | None = Field(None, description="Whether the last search was re-ranked")
    last_error: str | None = Field(None, description="Why the last fallback happened")


class EmbeddingSwitchState(BaseModel):
    state: Literal["idle", "embedding", "swapping", "done", "failed"]
    provider: str | None
    model: str | None
    model_id: str | None = Field(description="The new model's id")
    phase: str | None = Field(
        description="chunking, embedding or sections (the sections of merged units, for precise "
        "citations)"
    )
    done: int
    total: int
    eta_seconds: int | None = Field(description="From the rate so far in this phase")
    elapsed_seconds: float | None
    error: str | None = Field(description="Why the switch failed (the old index still serves)")
    message: str | None


class Status(BaseModel):
    vault: str
    data_dir: str
    notes: int
    chunks: int
    embedded: int
    pending: int = Field(description="Chunks waiting for a vector (searchable by BM25 already)")
    warnings: int
    embedding_model: str = Field(description="The configured embedding model id")
    index_model: str | None = Field(description="The model the index was built with")
    llm_model: str | None
    embed_rate_per_s: float | None
    eta_seconds: int | None
    last_run: str | None
    last_error: str | None
    writer: WriterState
    watching: bool
    asks: AskCounts
    note: NoteState | None = Field(None, description="Only when `?path=` is given")
    vector_store: VectorStoreState | None = Field(None, description="Where the vectors live")
    rerank: RerankState | None = Field(None, description="The re-ranking stage and its health")
    embedding_switch: EmbeddingSwitchState | None = Field(
        None,
        description="A switch of embedding model (`/v1/settings/embeddings`): running, done or "
        "failed; null: none since the start",
    )


# -- collections -------------------------------------------------------------------------------
class SkippedFile(BaseModel):
    path: str = Field(description="Source-relative; a folder ends in `/`")
    why: str = Field(description="The rule that left it out (`.gitignore`, size limit, binary…)")


class CollectionState(BaseModel):
    name: str = Field(description="What `collections` takes: `vault`, or a source's name")
    kind: str = Field(
        description="`vault` (the served vault or another vault), `code`, `markdown`, `web`"
    )
    primary: bool = Field(description="The served vault itself (its files open in Obsidian)")
    path: str = Field(description="Its folder on the sidecar's machine; a web source's start URL")
    indexed: bool = Field(description="It has an index (a new source is indexed at start-up)")
    files: int = Field(0, description="Files indexed")
    chunks: int = Field(0, description="Passages (code: symbol units) indexed")
    embedded: int = Field(0, description="…of which have their vectors")
    skipped: int = Field(0, description="Files and folders its rules left out")
    skipped_files: list[SkippedFile] = Field(
        default_factory=list, description="The first of them, with why (as `vault-rag status`)"
    )
    problem: str | None = Field(
        None, description="Why it cannot be indexed (missing folder, overlap…); null: none"
    )


class CollectionList(BaseModel):
    collections: list[CollectionState] = Field(description="The vault first, then each source")
    default: Literal["all", "vault"] = Field(
        description="What a search without `collections` covers (the `default_collections` setting)"
    )
    scanning: bool = Field(
        description="The start-up indexing of the sources, or a new source's first (added "
        "with `POST /v1/sources`), is still running"
    )
    problem: str | None = Field(
        None, description="Why the sources' declarations do not read (then only the vault)"
    )


# -- notes -------------------------------------------------------------------------------------
class PostedNoteIn(ApiModel):
    path: NotePath
    content: Annotated[
        str,
        Field(
            max_length=MAX_NOTE_CHARS,
            description="The note as Obsidian shows it: its frontmatter block (if any) followed "
            "by the body with every `![[embed]]` inlined.",
        ),
        AfterValidator(_encodable),
    ]
    embeds: list[NotePath] = Field(
        default_factory=list,
        max_length=10_000,
        description="Paths of the notes inlined into `content`, transitively.",
    )
    mtime: float | None = Field(
        None,
        ge=0,
        description="Modification time (ms since the epoch, Obsidian's `TFile.stat.mtime`) of "
        "the file the content was read from; lets the sidecar tell whether the file on disk is "
        "the version posted.",
    )


class NotesUpsert(ApiModel):
    notes: list[PostedNoteIn] = Field(min_length=1, max_length=1000)


class NoteResult(BaseModel):
    path: str
    status: Literal["indexed", "unchanged", "ignored", "stale"] = Field(
        description="indexed: chunks changed; unchanged: same chunks as before (skipped); "
        "ignored: in an ignored or hidden folder, or not a `.md` note; stale: the file on disk "
        "is newer than the posted text (its `mtime` is later than the posted `mtime`, or no "
        "`mtime` was posted and the file differs): the disk's version is kept and nothing "
        "posted was indexed; read the note again (`current_hash` is the file's sha256)"
    )
    source: Literal["disk", "posted"] | None = Field(
        description="disk: the file on disk resolves to the same text, its provenance (embed "
        "origins, exact lines) was used; posted: the posted text was chunked as is"
    )
    chunks: int
    embedded: int = Field(description="Chunks whose text is new: sent to the model")
    reused: int = Field(description="Chunks whose vector is kept or reused by content hash")
    current_hash: str | None = Field(
        None, description="stale only: the sha256 the index holds for the note (the file's)"
    )


class NotesUpserted(BaseModel):
    results: list[NoteResult]
    indexed: int
    unchanged: int
    ignored: int
    stale: int = 0
    embedded: int
    reused: int
    pending: int = Field(description="Chunks of the whole index still waiting for a vector")


class NotesDelete(ApiModel):
    paths: list[NotePath] = Field(min_length=1, max_length=10_000)


class PathResult(BaseModel):
    path: str
    status: Literal["deleted", "not_found"]


class NotesDeleted(BaseModel):
    results: list[PathResult]
    deleted: int


class Rename(ApiModel):
    old_path: NotePath
    new_path: NotePath


class NotesRename(ApiModel):
    renames: list[Rename] = Field(min_length=1, max_length=10_000)


class RenameResult(BaseModel):
    old_path: str
    new_path: str
    status: Literal["renamed", "indexed", "unchanged", "missing"] = Field(
        description="renamed: moved in the index; indexed: the old path was not indexed, the "
        "new one is now; unchanged: already done; missing: the new path is not on disk"
    )
    embedded: int = Field(
        description="Chunks that need the model (a new file name changes "
        "the title in every chunk's header; a folder move needs none)"
    )
    reused: int


class NotesRenamed(BaseModel):
    results: list[RenameResult]
    renamed: int


class FilesChanged(ApiModel):
    paths: list[NotePath] = Field(min_length=1, max_length=10_000)


class ChangedResult(BaseModel):
    path: str
    status: Literal["indexed", "deleted", "unchanged", "retry", "ignored"] = Field(
        description="indexed: read from the vault and (re-)indexed; deleted: no longer on disk, "
        "dropped; unchanged: the index already holds this file; retry: still being written, "
        "looked at again shortly; ignored: not a kind the sidecar indexes, or excluded"
    )


class FilesChangedResult(BaseModel):
    results: list[ChangedResult]
    indexed: int
    deleted: int


class NoteHashes(BaseModel):
    algorithm: Literal["sha256"] = "sha256"
    hashes: dict[str, str] = Field(
        description="Per indexed Markdown note (PDFs and canvases are left out: the sidecar "
        "reads them itself): the sha256 (hex) of the UTF-8 `content` last posted for "
        "it, while the file it was posted against is unchanged; otherwise the sha256 of the "
        "file's bytes (for a note without embeds saved with LF line breaks, the same value). "
        "On layout-ready the plugin posts every note whose hash differs from its own."
    )


# -- search ------------------------------------------------------------------------------------
class SearchRequest(ApiModel):
    query: Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_encodable)]
    k: int | None = Field(
        None, ge=1, le=100, description="How many results; default: the `top_k` setting (10)"
    )
    folder: Annotated[str, Field(max_length=1024), AfterValidator(_encodable)] | None = None
    tag: Annotated[str, Field(max_length=256), AfterValidator(_encodable)] | None = None
    collections: list[Annotated[str, Field(max_length=64)]] | None = Field(
        None,
        max_length=64,
        description="Search these collections: `vault` and the sources' names (`vault-rag "
        "sources list`); default: every one, or the vault alone when the "
        "`default_collections` setting says so",
    )


class SearchHit(BaseModel):
    note_path: str
    heading_path: str
    anchor: str
    chunk_id: str
    score: float
    text: str
    origin: str
    line_start: int
    line_end: int
    embedded_in: list[str]
    dense_score: float | None
    lexical_score: float | None
    # Small-to-big: the matched unit's enclosing section (bounded) and its lines; the citation
    # stays heading_path/anchor/line_start-line_end.
    context: str = ""
    context_line_start: int = 0
    context_line_end: int = 0
    base_score: float | None = Field(None, description="The fused score before feedback")
    prior: float = Field(1.0, description="The feedback factor: score = base_score × prior")
    promoted: bool = Field(False, description="The note is an answer saved as a note")
    kind: str = Field(
        "md",
        description="The source kind: `md`, `pdf`, `canvas`, (a code source) `code` or (a web "
        "source) `web`, `web_pdf`",
    )
    page: int | None = Field(
        None,
        description="PDF: the 1-based page the passage starts on (`anchor` is `page=N`, so "
        "`[[note_path#anchor]]` opens the PDF there)",
    )
    page_end: int | None = Field(
        None, description="PDF: the page it ends on (a paragraph running on to the next page)"
    )
    rerank_score: float | None = Field(
        None, description="The re-ranker's score, when this passage was re-scored"
    )
    rerank_fallback: str | None = Field(
        None, description="Why the re-ranker was not used for this search (fused order kept)"
    )
    collection: str = Field(
        "vault", description="Where the passage comes from: `vault` or a source's name"
    )
    symbol: str | None = Field(
        None,
        description="Code: the function, method, class or struct (`AMyActor::BeginPlay`); "
        "cite `note_path:line_start-line_end`",
    )
    related_file: str | None = Field(
        None,
        description="C/C++: the other file of the `.h`/`.cpp` pair (same collection)",
    )
    declared_at: str | None = Field(
        None,
        description="C/C++: where the header declares this definition (`path:line-line`)",
    )
    url: str | None = Field(
        None,
        description="A web source's page: the URL to cite and open (with `#anchor` when the "
        "section's heading has an id); `note_path` is then its file in the source's mirror",
    )
    page_title: str | None = Field(None, description="A web source's page: its title")
    graph_reason: str | None = Field(
        None,
        description="Added by the graph route for a relational question: why, e.g. "
        "`graph: CALLS DBImpl::Get (confidence 0.90)`",
    )
    linked: list[LinkedHit] = Field(
        default_factory=list,
        description="Note ↔ code links (only when a code source is searched): a note hit's "
        "code symbols, a code hit's notes naming it; at most 3, best first",
    )


class SearchResponse(BaseModel):
    results: list[SearchHit]
    took_ms: float
    routing: SearchRouting | None = Field(
        None,
        description="With more than one collection searched, how much each contributed and "
        "why (`retrieval/routing.py`); null with one collection",
    )


# -- related -----------------------------------------------------------------------------------
class RelatedHit(BaseModel):
    note_path: str
    heading_path: str = Field(description="Heading path of the best-matching passage")
    anchor: str = Field(description="Heading for a deep link `[[note#anchor]]`; may be empty")
    line_start: int
    line_end: int
    snippet: str = Field(description="The start of that passage, whitespace collapsed")
    score: float = Field(description="Cosine similarity of the closest pair of passages")
    linked: bool = Field(description="The note already links to (or embeds) this one")


class RelatedResponse(BaseModel):
    path: str
    status: Literal["ok", "pending", "not_indexed"] = Field(
        description="ok; pending: indexed but none of its passages has a vector yet (empty "
        "list, ask again later); not_indexed: the file exists but is not indexed yet"
    )
    chunks_used: int = Field(description="Passages of the note compared (stored vectors)")
    related: list[RelatedHit] = Field(description="Best first; the note itself is never listed")


# -- ask ---------------------------------------------------------------------------------------
class AskNote(ApiModel):
    """The note a question is about (the plugin's "Ask about this note"): retrieval prefers it
    and its linked notes, and `final.focus` says what the answer took from it."""

    path: NotePath
    selection: Annotated[str, Field(max_length=20_000), AfterValidator(_encodable)] | None = Field(
        None, description="Text selected in the note: searched as one more query"
    )
    links: list[NotePath] = Field(
        default_factory=list,
        max_length=1000,
        description="Notes it links to and that link to it (Obsidian's resolved links), "
        "preferred too; the sidecar adds the links it finds in the note's own text",
    )


class AskRequest(ApiModel):
    question: Annotated[str, Field(min_length=1, max_length=4000), AfterValidator(_encodable)]
    thread_id: ThreadId | None = Field(
        None, description="Continue this conversation; a new one when absent"
    )
    mode: Literal["strict", "hybrid"] | None = Field(
        None, description="strict: the vault only; hybrid: the web too (default: settings)"
    )
    note: AskNote | None = Field(None, description="Ask about this note (and its selection)")
    collections: list[Annotated[str, Field(max_length=64)]] | None = Field(
        None,
        max_length=64,
        description="Search these collections for evidence: `vault` and the sources' names; "
        "default: every one, or the vault alone when `default_collections` says so",
    )
    model: Annotated[str, Field(max_length=256)] | None = Field(
        None,
        description="Answer with this chat model of the server in use (one `GET /v1/models` "
        "lists); absent: the model in use; empty: no chat model (quoted answers). The pane's "
        "per-conversation picker sends it.",
    )


# -- excluded folders --------------------------------------------------------------------------
class ExcludeUpdate(ApiModel):
    exclude: list[Annotated[str, Field(max_length=1024)]] = Field(
        max_length=1000,
        description="The plugin's excluded folders: vault-relative folders or note paths "
        "(`Journal/private`, `[Secret]`); each excludes the path and everything under it. Every "
        "character means itself except `*`, any run of characters across folders (`*/drafts`). "
        "Replaces the list pushed before; [] clears it.",
    )


class ExcludeState(BaseModel):
    exclude: list[str] = Field(description="The plugin's list, normalised (NFC, `/`)")
    configured: list[str] = Field(
        description="The sidecar's own `exclude` setting (settings file or "
        "`VAULT_RAG_EXCLUDE`); applies too and cannot be changed through the API"
    )
    removed: int = Field(
        0, description="PUT: notes removed from the index now (excluded, or gone from disk)"
    )
    queued: int = Field(0, description="PUT: notes no longer excluded, queued for indexing")


# -- threads -----------------------------------------------------------------------------------
class ThreadMessage(BaseModel):
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    id: str | None = Field(description="An answer's id (for feedback and promote)")
    citations: list[dict[str, Any]] = Field(
        default_factory=list,
        description="An answer's citations, as its `citations` event gave them ([] otherwise)",
    )


class Thread(BaseModel):
    thread_id: str
    messages: list[ThreadMessage]
    summary: str


class ThreadListItem(BaseModel):
    thread_id: str
    title: str = Field(description="The first question, on one line, cut at 80 characters")
    updated_at: datetime = Field(description="When the thread last changed (its last turn)")
    message_count: int = Field(description="Questions and answers stored")


class ThreadList(BaseModel):
    threads: list[ThreadListItem] = Field(description="Newest first")
    next_before: str | None = Field(
        description="Pass as `before` for the next (older) page; null: no older thread"
    )
