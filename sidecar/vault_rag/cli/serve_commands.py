"""Commands of the sidecar server: serve, token."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from vault_rag.cli.app import DataDirOption, VaultOption, app, err, fail, out
from vault_rag.server_token import load_or_create_token, token_path
from vault_rag.settings import load_settings


@app.command()
def serve(
    vault: VaultOption,
    data_dir: DataDirOption = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=1, max=65535, help="Port on 127.0.0.1 (default 8765)."),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", help="uvicorn log level: warning, info, debug.")
    ] = "info",
) -> None:
    """Run the sidecar for the Obsidian plugin: the HTTP API on 127.0.0.1, the vault watcher
    and the answer graph, on the same index and settings as the other commands."""
    import uvicorn

    from vault_rag.api import HOST, create_app
    from vault_rag.embeddings.base import EmbeddingError
    from vault_rag.index.lock import IndexLockedError, WriterLock
    from vault_rag.index.vault_index import ModelMismatchError

    settings = load_settings(vault=vault, data_dir=data_dir, server_port=port)
    data = settings.resolved_data_dir()
    try:  # a clear message now rather than a traceback from the app's start-up
        WriterLock(data).acquire().release()
    except IndexLockedError as exc:
        fail(str(exc))
    token, created = load_or_create_token(data)
    if created:
        err.print(
            "[bold]Sidecar token[/] (paste it into the plugin's settings; shown once, "
            f"`vault-rag token --vault {vault}` shows it again):",
            highlight=False,
        )
        out.print(token, highlight=False, soft_wrap=True)
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    err.print(
        f"[dim]vault {settings.vault} · index {data} · http://{HOST}:{settings.server_port}[/]",
        highlight=False,
    )
    config = uvicorn.Config(
        create_app(settings, token=token),
        host=HOST,
        port=settings.server_port,
        log_level=log_level.lower(),
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    try:
        server.run()
    except (IndexLockedError, ModelMismatchError, EmbeddingError) as exc:
        fail(str(exc))
    if not server.started:
        fail("the server did not start (see the messages above)")


@app.command()
def token(vault: VaultOption, data_dir: DataDirOption = None) -> None:
    """Print the sidecar's access token (created when there is none yet)."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    value, created = load_or_create_token(data)
    if created:
        err.print(f"[dim]new token saved in {token_path(data)}[/]", highlight=False)
    out.print(value, highlight=False, soft_wrap=True)
