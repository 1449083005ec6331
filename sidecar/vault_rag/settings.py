"""Settings: defaults < settings file (TOML) < environment (`VAULT_RAG_*`) < CLI flags.

The settings file is the path in `VAULT_RAG_CONFIG`, else `vault-rag.toml` in the per-user
config dir (`vault-rag config-path` prints it) when it exists. `docs/settings.example.toml`
documents every key.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from vault_rag.storage.locations import (  # noqa: F401  (re-exported: the settings' own names)
    APP_NAME,
    SETTINGS_FILE_NAME,
    config_file_path,
    default_data_dir,
)

# Folders Obsidian itself never shows as notes (and tool folders that are never notes). The
# scan, the watcher, the posted-note routes and the note index all skip them.
DEFAULT_IGNORES: tuple[str, ...] = (".obsidian", ".trash", ".git", "node_modules")


class SourceSpec(BaseModel):
    """One source indexed beside the vault (`sources`, `vault-rag sources add`): its own
    collection in the vector store and its own lexical index (`source_indexes/collections.py`)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")  # never "vault" (the vault's own)
    path: Path | None = None  # the folder (every kind but `web`)
    kind: Literal["code", "vault", "markdown", "web"] = "code"
    include: list[str] = Field(default_factory=list)  # gitignore-style; empty: every file
    exclude: list[str] = Field(default_factory=list)  # gitignore-style, on top of .gitignore
    # `web` (sources/web/): the start URL (http or https); the crawl stays under its origin and
    # folder, `include`/`exclude` match the URL path below that folder; at most `max_pages`
    # pages kept (default: `web_max_pages`).
    url: str | None = None
    max_pages: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _where(self) -> SourceSpec:
        if self.kind == "web":
            if not self.url:
                raise ValueError("a web source needs `url`")
        elif self.path is None:
            raise ValueError(f"a {self.kind} source needs `path`")
        return self

    @property
    def location(self) -> str:
        """Its folder, or its URL for a web source (what `sources list` and status show)."""
        return (self.url or "") if self.kind == "web" else str(self.path)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VAULT_RAG_", extra="ignore")

    vault: Path | None = None
    data_dir: Path | None = Field(
        default=None, description="Where the index lives; default: per-user data dir, per vault"
    )

    # Embeddings
    # "hash": a deterministic stand-in for benchmarks and tests only (embeddings/hashing.py)
    embeddings: Literal["local", "fastembed", "openai", "hash"] = "local"
    embeddings_model: str | None = None  # fastembed / openai model name
    embeddings_base_url: str | None = None  # openai-compatible endpoint
    embeddings_api_key: SecretStr | None = None
    embeddings_max_tokens: int | None = None  # override the provider's input limit
    embeddings_batch_size: int = 32

    # Chunking (retrieval units). Sizes count the embedding model's own tokens of a unit's body
    # (its title/heading header is extra, and the whole stays within the model's input limit):
    # shorter sibling sections merge up to chunk_min, longer sections split towards chunk_max.
    # Chosen by the sweep in docs/retrieval.md.
    chunk_min: int = Field(default=64, ge=0)
    chunk_max: int = Field(default=256, ge=1)
    chunk_overlap_chars: int = Field(default=50, ge=0)  # repeated where a paragraph is split
    # Small-to-big: search results and answers also get the unit's enclosing section, at most
    # this many characters (0: the unit's own text only).
    chunk_context_chars: int = Field(default=1500, ge=0)

    # --- Vector store (index/stores/): where the vectors live; BM25 always stays local --------
    # chroma: embedded in the data dir; chroma-http: a `chroma run` server; milvus: a Milvus
    # server/cluster (`milvus_uri`) or Milvus Lite (a .db file in the data dir) without one.
    # Switch with `vault-rag migrate --to KIND` (copies the cached vectors, no re-embedding).
    vector_store: Literal["chroma", "chroma-http", "milvus"] = "chroma"
    chroma_url: str = "http://localhost:8000"  # chroma-http: the server's address
    chroma_headers: dict[str, str] = Field(default_factory=dict)  # extra HTTP headers (auth)
    chroma_token: SecretStr | None = None  # sent as `Authorization: Bearer <token>`
    milvus_uri: str | None = None  # e.g. http://milvus.internal:19530; None: Milvus Lite
    milvus_token: SecretStr | None = None  # "user:password" or an API key
    # --- end of vector store settings ----------------------------------------------------------

    # Vault scanning
    ignore: list[str] = Field(default_factory=lambda: list(DEFAULT_IGNORES))
    # Excluded folders (private): vault-relative folders or note paths (literal but for `*`, the
    # one wildcard, which crosses folders) whose notes are never read, indexed or accepted from
    # the plugin (`vault/exclusions.py`). Applied together with the list the plugin pushes
    # (`PUT /v1/settings/exclude`, kept in the data dir).
    exclude: list[str] = Field(default_factory=list)
    # Source kinds (sources/registry.py): which kinds of file are indexed besides Markdown
    # notes, and the limits past which a PDF is skipped with a warning (`vault-rag status`).
    index_kinds: list[Literal["md", "pdf", "canvas"]] = Field(
        default_factory=lambda: ["md", "pdf", "canvas"]
    )
    max_pdf_mb: float = Field(default=50.0, gt=0)  # larger PDFs: `too_large`, not read
    max_pdf_pages: int = Field(default=1000, ge=1)  # longer PDFs: `too_many_pages`, not read

    # Sources beside the vault (source_indexes/collections.py): a code tree, another vault, a folder
    # of Markdown docs, each its own collection. Also `vault-rag sources add` (kept in the data
    # dir). Code files over `max_code_kb` are skipped (status says so).
    sources: list[SourceSpec] = Field(default_factory=list)
    max_code_kb: float = Field(default=1024.0, gt=0)
    # Web sources (sources/web/): fetched only from the source's own origin, only when one is
    # declared. One request at a time per host, `web_delay` seconds apart (robots.txt's
    # Crawl-delay when longer, up to 30 s); a request or a body over `web_timeout` seconds, or a
    # body over `web_max_page_mb`, is a problem in status; a Retry-After up to
    # `web_max_retry_after` seconds is waited out. `web_refresh_hours`: how often the server
    # re-crawls (conditional requests: an unchanged page costs a 304).
    web_delay: float = Field(default=1.0, ge=0)
    web_timeout: float = Field(default=20.0, gt=0)
    web_max_page_mb: float = Field(default=5.0, gt=0)
    web_max_pages: int = Field(default=500, ge=1)
    web_max_retry_after: float = Field(default=60.0, ge=0)
    web_refresh_hours: float = Field(default=24.0, gt=0)
    # What a search covers when it names no collections: "all" (the vault and every source) or
    # "vault" (the vault alone; sources only when named).
    default_collections: Literal["all", "vault"] = "all"

    # Retrieval
    top_k: int = 10
    per_note_cap: int = 2
    rrf_k: int = 10
    # Weight of the note-centroid list in the fusion (0: off); index/dense/note_vectors.py says why
    note_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # Share of the corpus mean taken off units and query before the dense cosine (0: off);
    # retrieval/dense.py says why
    dense_centering: float = Field(default=0.5, ge=0.0, le=1.0)
    # Share of a top passage's score it lends to the notes it links to (0: off);
    # retrieval/link_signal.py says why
    link_weight: float = Field(default=0.15, ge=0.0, le=1.0)
    # Asking about a note (`POST /v1/ask` `note`): its passages' scores × (1 + w), its linked
    # notes' × (1 + w/2), bounded (retrieval/focus.py)
    focus_boost: float = Field(default=0.3, ge=0.0, le=0.5)
    # Cite the section of each retrieved unit that answers, not the unit's first heading
    # (retrieval/cite.py); note ranking unchanged, +.03 to +.09 heading MRR on every set
    # ~+1 ms a search; also embeds merged units' sections when indexing (+20-29% model time)
    cite_spans: bool = True

    # --- Re-ranking (retrieval/rerank/): a second stage over the fused top candidates ----------
    # none: off; http: a `/v1/rerank` service (llama.cpp --reranking, TEI, vLLM, Jina, Cohere);
    # llm: listwise by the configured chat model (`llm_model`). A timeout or error keeps the
    # fused order, and the search, the answer and `/v1/status` say so.
    rerank: Literal["none", "http", "llm"] = "none"
    rerank_url: str | None = None  # http: the endpoint, e.g. http://127.0.0.1:8012/v1/rerank
    rerank_model: str | None = None  # http: the `model` field sent (optional for local servers)
    rerank_api_key: SecretStr | None = None  # http: sent as `Authorization: Bearer <key>`
    rerank_candidates: int = Field(default=30, ge=1, le=200)  # top fused candidates re-scored
    rerank_timeout: float = Field(default=10.0, gt=0)  # seconds per re-ranking request
    rerank_doc_chars: int = Field(default=1200, ge=100)  # each passage sent, at most
    # llm: at most this many passages and this many (estimated) prompt tokens per call
    rerank_llm_candidates: int = Field(default=20, ge=2, le=50)
    rerank_llm_token_budget: int = Field(default=3000, ge=500)
    # --- end of re-ranking settings ------------------------------------------------------------

    # --- Cross-language questions (retrieval/translate.py): with a chat model, a question written
    # in another script than most of the vault is also searched translated into the vault's
    # language: one bounded call per question, cached per thread; any failure: no translation.
    translate_queries: bool = True  # has no effect without `llm_model`
    translate_to: str | None = None  # the vault's language; None: from its script (Latin: English)
    translate_timeout: float = Field(default=15.0, gt=0)  # seconds for the one call
    translate_max_tokens: int = Field(default=96, ge=8, le=1024)  # the reply, at most

    # --- Answering (graph/, `vault-rag ask`): chat model, web search, grading ------------------
    # No `llm_model` means no language model: the graph answers deterministically (extractive).
    llm_base_url: str | None = None  # any OpenAI-compatible server; None = api.openai.com
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None  # local servers need none
    # auto: JSON schema first, function calling when the server rejects it (remembered per server)
    llm_structured_method: Literal["auto", "json_schema", "function_calling", "json_mode"] = "auto"
    llm_timeout: float = 120.0  # seconds per request
    llm_max_retries: int = 1  # transport retries (connection errors, 429, 5xx) per request
    llm_max_repairs: int = 1  # re-asks after an unparsable structured reply (reported separately)
    llm_max_tokens: int = 1024
    llm_temperature: float | None = 0.0  # None: leave it to the server
    web_mode: Literal["strict", "hybrid"] = "strict"  # strict: vault only
    web_when: Literal["weak", "always"] = "weak"  # hybrid: web when vault evidence is weak / always
    tavily_api_key: SecretStr | None = None  # no key: no web search (and a note saying so)
    tavily_base_url: str | None = None  # None = Tavily's public API
    web_include_domains: list[str] | None = None  # None: the domain preset's list (or any domain)
    web_max_results: int = 5
    domain: str | None = None  # what the assistant is about; default: "the topics of this vault"
    domain_preset: Literal["ue"] | None = None  # "ue": Unreal Engine wording and Epic's sites
    grade_threshold: float = 0.5  # graded candidates below this are dropped
    dedup_threshold: float | None = None  # cosine; None = calibrated for the embedding model
    weak_evidence_threshold: float | None = None  # cosine; None = calibrated for the model
    hyde: bool = False  # also search with a hypothetical answer passage per aspect
    # --- end of answering settings -------------------------------------------------------------

    # --- Feedback (feedback/, `vault-rag feedback`, promote) -----------------------------------
    feedback_prior: bool = True  # ratings re-order later searches (bounded, see retrieval/hybrid)
    feedback_half_life_days: float = Field(default=90.0, gt=0)  # a vote's weight halves this often
    feedback_max_boost: float = Field(default=0.1, ge=0, le=0.5)  # scores scale by [1-b, 1+b]
    answers_folder: str = "Vault RAG Answers"  # vault folder promoted answers are written to
    # --- end of feedback settings --------------------------------------------------------------

    # --- Server (`vault-rag serve`, api/, watch/, index/updates/writer.py)
    # ----------------------------- The host is always 127.0.0.1: the API is never reachable
    # from another machine (other devices: only paired ones, sealed, on the remote listener).
    server_port: int = Field(default=8765, ge=0, le=65535)  # 0: a free port (serve --port 0)
    # Browser origins allowed to call the API (Obsidian desktop; mobile shells for later).
    server_cors_origins: list[str] = Field(
        default_factory=lambda: ["app://obsidian.md", "capacitor://localhost", "http://localhost"]
    )
    server_max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)  # larger: 413
    server_body_timeout: float = Field(default=10.0, gt=0)  # a whole request body, else 408
    server_header_timeout: float = Field(default=10.0, gt=0)  # a request's headers, else 408
    # Searches (`/v1/search`) run at most this many at once, the rest wait in line, so an
    # ask's own model calls (outside that line) wait behind a few searches, not behind every
    # one in flight: with 50 searches, asks took 46x their time alone unbounded, 2.6x at 4
    # (docs/benchmarks.md). Higher keeps more search throughput (the model batches queries).
    server_search_concurrency: int = Field(default=4, ge=1)
    # A switch of embedding model waits this long for the answers and searches already running
    # on the old index (new ones get 503 `switching` meanwhile); then it stops those left, an
    # answer ending with `error` `switched`. Long enough for a slow local model's answer.
    server_switch_drain_timeout: float = Field(default=120.0, gt=0)
    server_watch: bool = True  # follow changes made outside Obsidian (git, sync, other editors)
    # --- Other devices (issue 41, remote/, docs/remote.md): a second listener for paired
    # devices only, every message sealed. Off (None) unless "HOST:PORT" (`serve
    # --remote-listen`), e.g. "0.0.0.0:8766" (the home LAN) or a tailnet address.
    server_remote_listen: str | None = None
    remote_max_body_bytes: int = Field(default=1024 * 1024, ge=1024)  # sealed request: else 413
    remote_pair_code_ttl: float = Field(default=300.0, gt=0)  # a pairing code's life, seconds
    remote_pair_attempts_per_minute: int = Field(default=10, ge=1)  # pairing steps, all devices
    remote_clock_skew: float = Field(default=300.0, gt=0)  # a request's `ts` may be this far off
    watch_debounce: float = Field(default=0.5, gt=0)  # seconds of quiet that close a batch
    watch_max_delay: float = Field(default=5.0, gt=0)  # a never-quiet vault still flushes
    watch_retry_delay: float = Field(default=1.0, gt=0)  # a file still being written: look again
    index_batch_notes: int = Field(default=200, ge=1)  # notes per index write batch
    # `GET /v1/related`: notes near a note, from its stored vectors (retrieval/related.py)
    related_k: int = Field(default=10, ge=1, le=100)  # related notes returned by default
    related_max_query_chunks: int = Field(default=24, ge=1)  # a long note: evenly spaced chunks
    # `vault-rag mcp` and `/mcp` (mcp_server/): what other agents may take in one call
    mcp_max_k: int = Field(default=50, ge=1, le=100)  # search_notes / related_notes `k`
    mcp_max_passage_chars: int = Field(default=2000, ge=100)  # each search passage, then cut
    mcp_max_note_chars: int = Field(default=20_000, ge=1000)  # read_note / a note resource
    mcp_page_size: int = Field(default=100, ge=1, le=1000)  # list_notes / resources/list page
    # --- end of server settings ----------------------------------------------------------------

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlFileSource(settings_cls))

    def resolved_data_dir(self) -> Path:
        """The index folder for this vault: explicit `data_dir`, else one folder per vault under
        the per-user data dir, so vault sync never carries index files."""
        if self.data_dir is not None:
            return self.data_dir.expanduser().resolve()
        if self.vault is None:
            raise ValueError("a vault path is needed to choose the data dir")
        return default_data_dir(self.vault)


class SettingsFileError(ValueError):
    """The settings file named by VAULT_RAG_CONFIG is missing, unreadable or not valid TOML."""


class TomlFileSource(PydanticBaseSettingsSource):
    """Reads the settings file (see `config_file_path`); an explicitly named file must exist."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        file = config_file_path()
        if not file.is_file():
            if os.environ.get("VAULT_RAG_CONFIG"):
                raise SettingsFileError(f"VAULT_RAG_CONFIG points at {file}, which does not exist")
            return {}
        try:
            with file.open("rb") as handle:
                return tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise SettingsFileError(f"the settings file {file} is not valid TOML: {exc}") from exc
        except OSError as exc:
            raise SettingsFileError(f"the settings file {file} cannot be read: {exc}") from exc


def defaults() -> Settings:
    """The built-in defaults alone (no settings file, no environment): for objects built
    without settings (library use, tests), so they behave exactly as a fresh install."""
    return Settings.model_construct()


def default(name: str) -> Any:
    """The built-in default of one setting. Option dataclasses elsewhere (`SearchOptions`,
    `ChunkOptions`, the graph's `Configuration`) take their defaults from here, so a default
    is written once: in `Settings`."""
    return Settings.model_fields[name].get_default(call_default_factory=True)


def load_settings(**overrides: Any) -> Settings:
    """Settings with CLI overrides applied (None means "not given")."""
    given = {k: v for k, v in overrides.items() if v is not None}
    return Settings(**given)
