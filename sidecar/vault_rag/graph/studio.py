"""The answer graph as `langgraph dev` loads it (LangGraph Studio, agent-chat-ui): `langgraph.json`
names `graph` here.

The LangGraph server imports this module in a worker thread before it serves anything, so
everything slow or blocking happens here, once: opening the index, loading the embedding model,
indexing new and changed notes, building the chat model and the web search client. Runs then
find them ready (`config.use_process_resources`) and never block the server's event loop, so
a plain `langgraph dev` works (no `--allow-blocking`). Which vault, which data dir and which
model come from the `VAULT_RAG_*` environment variables (`langgraph.json` reads `.env`; see
`.env.example`).
"""

from __future__ import annotations

import logging

from langgraph.graph.state import CompiledStateGraph

from vault_rag.graph.config import Resources, use_process_resources
from vault_rag.graph.graph import build_graph
from vault_rag.index.lock import IndexLockedError
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.settings import Settings

log = logging.getLogger(__name__)


def load_resources(settings: Settings) -> Resources:
    """The resources of `settings`, with the index brought up to date with the vault (as
    `vault-rag ask` does) and the embedding model loaded."""
    if settings.vault is None:
        raise ValueError(
            "no vault configured for the answer graph: set VAULT_RAG_VAULT (langgraph.json "
            "reads it from .env; copy .env.example to .env)"
        )
    index = open_index(settings)
    try:
        summary = make_indexer(settings, index).run()
        log.info("vault-rag index of %s: %s", settings.vault, summary.line())
    except IndexLockedError as exc:  # `vault-rag serve` indexes it: answer from it as it is
        log.warning("the index is being updated by another process (%s)", exc)
    except StoreUnavailableError as exc:
        log.warning("the vector store cannot be reached, answering from BM25 alone (%s)", exc)
    # A nothing-changed index never loaded the model: load it now, not during the first run.
    index.provider.embed_query("warm-up")
    return Resources.from_settings(settings, index=index)


def studio_graph(settings: Settings | None = None) -> CompiledStateGraph:
    """The compiled graph, with resources loaded for every run of this process (the server
    adds its own checkpointer). They are not put in the graph's config: the server's
    checkpointer stores the config with each checkpoint and cannot pickle live objects."""
    use_process_resources(load_resources(settings or Settings()))
    return build_graph()


graph = studio_graph()
