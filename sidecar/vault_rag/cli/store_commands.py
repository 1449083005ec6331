"""`vault-rag migrate`: move the index's vectors to another vector-store backend."""

from __future__ import annotations

from typing import Annotated, Literal

import typer
from rich.markup import escape

from vault_rag.cli.app import DataDirOption, VaultOption, app, fail, out
from vault_rag.index.lock import IndexLockedError
from vault_rag.index.migrate import MigrateError, migrate_index
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.settings import load_settings
from vault_rag.source_indexes.collections import indexed_sources

Backend = Literal["chroma", "chroma-http", "milvus"]


@app.command()
def migrate(
    to: Annotated[Backend, typer.Option("--to", help="The backend to copy the vectors into.")],
    vault: VaultOption,
    data_dir: DataDirOption = None,
) -> None:
    """Copy the index's vectors into another vector store (chroma, chroma-http, milvus) from
    the manifest's vector cache, without re-embedding; the store's address comes from the
    settings (`chroma_url`, `milvus_uri`, ...). Each source's index beside the vault moves
    too. Then set `vector_store` to the same value."""
    settings = load_settings(vault=vault, data_dir=data_dir, vector_store=to)
    target_dir = settings.resolved_data_dir()
    out.print(f"index: {target_dir}", highlight=False, markup=False)
    try:
        summary = migrate_index(settings, vault, target_dir)
    except (MigrateError, IndexLockedError, StoreUnavailableError) as exc:
        fail(str(exc))
        return
    out.print(summary.line(), highlight=False)
    failed = False
    for spec, folder, root in indexed_sources(settings):  # each source's index moves too
        try:
            done = migrate_index(settings, root, folder)
        except (MigrateError, IndexLockedError, StoreUnavailableError) as exc:
            out.print(f"[red]source {escape(spec.name)}:[/] {escape(str(exc))}")
            failed = True
            continue
        out.print(f"source {spec.name}: {done.line()}", highlight=False, markup=False)
    if failed:
        raise typer.Exit(1)
    if load_settings(vault=vault, data_dir=data_dir).vector_store != to:
        out.print(
            f'now set vector_store = "{to}" (settings file) or VAULT_RAG_VECTOR_STORE={to}: '
            "search refuses the old store from here on",
            highlight=False,
        )
