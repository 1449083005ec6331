"""The Typer app and the options every command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from vault_rag.storage.private_files import private_umask
from vault_rag.vault.types import VaultWarning

app = typer.Typer(
    help="Vault RAG: ask your Obsidian vault. Cites your notes first.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _private_files() -> None:
    """Every command: files the process creates are private (the index holds note text)."""
    private_umask()


out = Console()
err = Console(stderr=True)

VaultOption = Annotated[
    Path,
    typer.Option(
        "--vault",
        # Every command, like the settings, takes the vault from the environment too.
        envvar="VAULT_RAG_VAULT",
        help="Path of the Obsidian vault (the folder that holds your notes).",
        exists=True,
        file_okay=False,
        dir_okay=True,
        resolve_path=True,
    ),
]
DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="Where the index is kept (default: a per-user data folder, one per vault).",
        file_okay=False,
        resolve_path=True,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def print_warnings(warnings: list[VaultWarning]) -> None:
    for w in warnings:
        where = f"{w.note}:{w.line}" if w.line else w.note
        text = escape(f"{w.code} {where}: {w.message}")
        err.print(f"[yellow]warning[/] {text}", highlight=False)


def fail(message: str, code: int = 1) -> None:
    err.print(f"[red]error:[/] {escape(str(message))}", highlight=False)
    raise typer.Exit(code)
