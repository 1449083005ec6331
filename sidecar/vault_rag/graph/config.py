"""What a run of the answer graph is configured with, passed in through `RunnableConfig`.

`Configuration` holds plain values (the domain, modes, thresholds); `Resources` holds the live
objects (the vault index, the chat model, the web search client). Both travel in
``config["configurable"]``: values under their own names, the resources under ``"resources"``.
When no resources are passed (``langgraph dev``), the ones `graph/studio.py` loaded when the
graph was imported are used; a node never builds them itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import ConfigDict

from vault_rag.graph.llm import ChatProvider
from vault_rag.graph.web import WebSearch
from vault_rag.index.vault_index import VaultIndex
from vault_rag.settings import Settings, default
from vault_rag.settings import defaults as default_settings  # `defaults` is a field below

DEFAULT_DOMAIN = "the topics of this vault"


@dataclass(frozen=True)
class DomainPreset:
    domain: str
    include_domains: tuple[str, ...]


DOMAIN_PRESETS: dict[str, DomainPreset] = {
    "ue": DomainPreset(
        domain=(
            "Unreal Engine development: C++ and Blueprints, the gameplay framework, rendering, "
            "materials, animation, networking and replication, UI (UMG), assets, tools, "
            "profiling and the editor"
        ),
        # Epic's official documentation and forums.
        include_domains=("dev.epicgames.com", "docs.unrealengine.com", "forums.unrealengine.com"),
    )
}


@dataclass(kw_only=True)
class Configuration:
    """Tunable behaviour of one run. The product builds it with `from_settings` only; the
    defaults of the values that are settings come from `Settings` (one home for defaults), so
    a bare `Configuration()` (tests, `langgraph dev` overrides) is what ships. It is also the
    graph's context schema: LangGraph Studio shows these fields, their defaults and the
    docstrings below as the run's configuration."""

    # Field docstrings become the descriptions Studio shows (pydantic reads them).
    __pydantic_config__ = ConfigDict(use_attribute_docstrings=True)

    domain: str = DEFAULT_DOMAIN
    """What the assistant is about: questions outside it are declined (VAULT_RAG_DOMAIN)."""
    web_mode: Literal["strict", "hybrid"] = default("web_mode")
    """strict: answer from the vault only; hybrid: the web (Tavily) may add evidence."""
    web_when: Literal["weak", "always"] = default("web_when")
    """Hybrid mode: search the web only when the vault's evidence is weak, or always."""
    max_aspects: int = 4
    """At most this many aspects (sub-questions) per question."""
    vault_queries_per_aspect: int = 3
    """Vault search queries the model may write per aspect (the question itself is one)."""
    web_queries_per_aspect: int = 2
    """Web search queries per aspect, in hybrid mode."""
    top_k: int = default("top_k")
    """Vault results per search query."""
    per_note_cap: int = default("per_note_cap")
    """At most this many results of one note per search query."""
    rrf_k: int = default("rrf_k")
    """Reciprocal-rank-fusion constant joining the dense and BM25 result lists."""
    grade_candidates: int = 12
    """Candidates per aspect the grader sees, best first (bounds the grading prompt)."""
    docs_per_aspect: int = 5
    """Evidence kept per aspect after grading."""
    grade_threshold: float = default("grade_threshold")
    """Graded candidates below this score (0-1) are dropped (the top hits always stay)."""
    dedup_threshold: float | None = default("dedup_threshold")
    """Cosine above which two pieces of evidence merge; empty: calibrated per embedding model."""
    weak_evidence_threshold: float | None = default("weak_evidence_threshold")
    """Cosine below which vault evidence is weak; empty: calibrated per embedding model."""
    hyde: bool = default("hyde")
    """Also search with a hypothetical answer passage per aspect (one model call each)."""
    history_messages: int = 6
    """Recent messages the condenser sees besides the running summary."""
    excerpt_chars: int = 700
    """Characters of each candidate shown in grading prompts."""
    collections: list[str] | None = None
    """Collections vault search covers: `vault` and sources' names; empty: the default."""

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        """Values given in ``configurable`` over the defaults the resources were built with."""
        configurable = ensure_config(config).get("configurable") or {}
        names = {f.name for f in fields(cls) if f.init}
        given = {k: v for k, v in configurable.items() if k in names}
        return replace(get_resources(config).defaults, **given)

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> Configuration:
        preset = DOMAIN_PRESETS.get(settings.domain_preset or "")
        values: dict[str, Any] = {
            "domain": settings.domain or (preset.domain if preset else DEFAULT_DOMAIN),
            "web_mode": settings.web_mode,
            "web_when": settings.web_when,
            "top_k": settings.top_k,
            "per_note_cap": settings.per_note_cap,
            "rrf_k": settings.rrf_k,
            "grade_threshold": settings.grade_threshold,
            "dedup_threshold": settings.dedup_threshold,
            "weak_evidence_threshold": settings.weak_evidence_threshold,
            "hyde": settings.hyde,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def as_configurable(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Resources:
    """The long-lived objects a run uses. Build once (CLI run, server start) and reuse."""

    index: VaultIndex
    llm: ChatProvider | None = None  # None: no language model configured
    web: WebSearch | None = None  # None: no web search possible (see `web_missing`)
    web_missing: str = "no Tavily API key is configured (set VAULT_RAG_TAVILY_API_KEY)"
    defaults: Configuration = field(default_factory=Configuration)
    # Feedback prior for vault search (`retrieval.hybrid.SearchOptions.prior`); None: off.
    prior: Callable[[Sequence[str]], Mapping[str, float]] | None = None
    # What vault search is built from (`retrieval.hybrid.search_options`); the per-run values
    # (`top_k`, `per_note_cap`, `rrf_k`) come from the run's `Configuration`.
    settings: Settings = field(default_factory=default_settings)
    # The sources beside the vault (`sources/service.ServedSources`); None: the vault alone.
    sources: Any = None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        index: VaultIndex | None = None,
        prior: Callable[[Sequence[str]], Mapping[str, float]] | None = None,
    ) -> Resources:
        """Resources for `settings`. `prior`: an open feedback prior to share (the server
        opens one for every search path); None opens one here when the setting is on."""
        from vault_rag.feedback.prior import open_prior
        from vault_rag.graph.llm import build_chat_provider
        from vault_rag.graph.web import build_web_search
        from vault_rag.serving.context import open_index

        preset = DOMAIN_PRESETS.get(settings.domain_preset or "")
        include = settings.web_include_domains
        if include is None and preset is not None:
            include = list(preset.include_domains)
        index = index or open_index(settings)
        return cls(
            index=index,
            llm=build_chat_provider(settings),
            web=build_web_search(settings, include_domains=include or []),
            defaults=Configuration.from_settings(settings),
            # Ratings given to earlier answers re-order what the vault search returns.
            prior=prior or open_prior(settings.model_copy(update={"data_dir": index.data_dir})),
            settings=settings,
        )


class ResourcesMissingError(RuntimeError):
    """A node ran with no resources: none in its config and none loaded for the process."""


_process_lock = threading.Lock()
_process: Resources | None = None


def use_process_resources(resources: Resources | None) -> None:
    """Resources for runs that bring none in their config: `graph/studio.py` loads them once
    when `langgraph dev` imports the graph (a platform checkpointer would try to pickle live
    objects passed in the config). None forgets them."""
    global _process
    with _process_lock:
        _process = resources


def get_resources(config: RunnableConfig | None = None) -> Resources:
    """The resources passed in `config`, else the ones loaded for the process."""
    configurable = ensure_config(config).get("configurable") or {}
    resources = configurable.get("resources")
    if isinstance(resources, Resources):
        return resources
    with _process_lock:
        if _process is None:
            # Never built here: that would block the event loop of the run that needs them.
            raise ResourcesMissingError(
                "the answer graph has no resources: pass them in the run's config "
                "(configurable['resources'], see graph/run.py) or load the graph from "
                "vault_rag/graph/studio.py (langgraph.json)"
            )
        return _process
