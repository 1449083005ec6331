"""`vault-rag doctor`: check a data dir, and with `--repair` set damaged files aside and
rebuild the index from the vault."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from vault_rag.cli.app import DataDirOption, VaultOption, app, fail, out
from vault_rag.settings import load_settings


@app.command()
def doctor(
    vault: VaultOption,
    data_dir: DataDirOption = None,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Move damaged files aside (never deleted) and rebuild the index from the vault.",
        ),
    ] = False,
) -> None:
    """Check the data dir: SQLite integrity of every database, that Chroma opens, that the
    lexical index loads, and that the manifest agrees with the stores. Exit code 1 when
    something is damaged and not repaired."""
    from vault_rag.embeddings.base import EmbeddingError
    from vault_rag.index.lock import IndexLockedError, WriterLock
    from vault_rag.index.vault_index import ModelMismatchError, VaultIndex
    from vault_rag.maintenance import doctor as checks
    from vault_rag.serving.context import build_provider, make_indexer

    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    out.print(f"data dir: {data}", highlight=False, markup=False)
    if not data.exists():
        out.print("nothing there yet: `vault-rag index` or `vault-rag serve` creates it")
        return
    try:
        provider = build_provider(settings)
    except EmbeddingError as exc:
        fail(str(exc))
        return
    report = checks.full_check(data, lambda: VaultIndex(vault, data, provider))
    for finding in report.findings:
        state = "[green]ok[/]" if finding.ok else f"[red]damaged[/]: {escape(finding.problem)}"
        present = (data / finding.part.path).exists()
        out.print(
            f"{finding.part.name:<24} {finding.part.path:<18} "
            + (state if present or not finding.ok else "[dim]absent[/]"),
            highlight=False,
        )
    for note in report.notes:
        out.print(note, highlight=False, markup=False)
    if not report.damaged:
        out.print("no damage found")
        return
    if not repair:
        out.print("run `vault-rag doctor --repair` to move the damaged files aside and rebuild")
        raise typer.Exit(1)
    try:
        lock = WriterLock(data).acquire()
    except IndexLockedError as exc:
        fail(f"{exc} (a running `vault-rag serve` repairs at its next start)")
        return
    try:
        checks.repair(data, report)
        for action in report.actions:
            out.print(f"repaired: {action}", highlight=False, markup=False)
        index = VaultIndex(vault, data, provider)
        try:
            lock.release()  # the indexer takes the writer lock itself
            lock = None
            summary = make_indexer(settings, index).run()
        finally:
            index.close()
    except (IndexLockedError, ModelMismatchError, EmbeddingError) as exc:
        fail(str(exc))
        return
    finally:
        if lock is not None:
            lock.release()
    out.print(f"rebuilt from the vault: {summary.line()}", highlight=False, markup=False)
