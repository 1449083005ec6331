"""`vault-rag search` in its own process, when no sidecar answers (`serving/search_client.py`).

It imports only what one search needs: settings, the index (with the dense snapshot, no
chromadb while it is current: `index/dense/snapshot.py`), hybrid search and the feedback prior.
Not the Typer CLI with its other commands and their stages (~0.4 s of imports), so the
`vault-rag` entry point (`entry.py`) calls it directly; the Typer command calls it too, for
`--in-process` and anything the entry point leaves to Typer's parsing.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from rich.markup import escape

from vault_rag.serving.search_client import SearchArgs, print_search_results


def search_in_process(args: SearchArgs, console: Any = None) -> int:
    """Search the index and print the results as `vault-rag search` does; the exit code (1
    with an error on stderr when the index cannot be opened or searched)."""
    from rich.console import Console

    from vault_rag.embeddings.base import EmbeddingError
    from vault_rag.feedback.prior import FeedbackPrior, open_prior
    from vault_rag.index.vault_index import ModelMismatchError
    from vault_rag.maintenance.doctor import DamagedDataError
    from vault_rag.retrieval.collections import UnknownCollectionError, search_routed
    from vault_rag.retrieval.hybrid import search_options
    from vault_rag.serving.context import open_index
    from vault_rag.settings import load_settings
    from vault_rag.source_indexes.collections import open_searched
    from vault_rag.source_indexes.graph_route import route_for
    from vault_rag.source_indexes.pair_links import link_pairs
    from vault_rag.storage.private_files import private_umask

    private_umask()  # the index holds note text (as every CLI command: cli/app.py)
    err = Console(stderr=True)

    def fail(message: str) -> int:
        err.print(f"[red]error:[/] {escape(str(message))}", highlight=False)
        return 1

    settings = load_settings(vault=args.vault, data_dir=args.data_dir)
    try:
        vault_index = open_index(settings, search_only=True)
    except (EmbeddingError, DamagedDataError) as exc:
        return fail(str(exc))
    prior: FeedbackPrior | None = None
    indexes = {"vault": vault_index}
    try:
        vault_index.check_model()
        indexes = open_searched(settings, vault_index, list(args.collections))
        prior = open_prior(settings)
        options = search_options(
            settings,
            prior=prior,
            k=args.k,
            per_note_cap=args.per_note,
            folder=args.folder,
            tag=args.tag,
        )
        route = route_for(settings, vault_index.data_dir, indexes)  # None: no code source
        options = replace(options, graph_route=route) if route is not None else options
        started = time.perf_counter()
        results, routing = search_routed(indexes, args.query, options)
        results = link_pairs(settings, vault_index.data_dir, indexes, results)  # note ↔ code
        elapsed = time.perf_counter() - started
        if vault_index.store_error:
            err.print(
                f"[yellow]warning[/] BM25 only: {escape(str(vault_index.store_error))}",
                highlight=False,
            )
    except (ModelMismatchError, EmbeddingError, UnknownCollectionError, ValueError) as exc:
        return fail(str(exc))
    finally:
        for index in {id(i): i for i in (vault_index, *indexes.values())}.values():
            index.close()
        if prior is not None:
            prior.close()
    print_search_results(
        args.query,
        [r.to_dict() for r in results],
        elapsed,
        as_json=args.as_json,
        explain=args.explain,
        prior_off=prior is None,
        console=console,
        routing=routing.to_dict() if routing else None,
    )
    return 0
