"""`vault-rag doctor`: check a data dir (the vault's index and each source's), and with
`--repair` set damaged files aside and rebuild each damaged index from its files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from vault_rag.cli.app import DataDirOption, VaultOption, app, err, fail, out
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
    lexical index loads, and that the manifest agrees with the stores; the same for each
    source's index. Exit code 1 when something is damaged and not repaired."""
    from vault_rag.embeddings.base import EmbeddingError
    from vault_rag.index.vault_index import VaultIndex
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
    _print_report(report, data)
    vault_ok = not report.damaged
    if report.damaged and repair:
        vault_ok = _repair(
            data,
            report,
            lambda: VaultIndex(vault, data, provider),
            lambda index: make_indexer(settings, index),
            "from the vault",
        )
    sources_ok = _doctor_sources(settings, provider, repair)
    devices_ok = _doctor_devices(data)
    if report.damaged and not repair:
        out.print("run `vault-rag doctor --repair` to move the damaged files aside and rebuild")
    if not (vault_ok and sources_ok and devices_ok):
        raise typer.Exit(1)
    if not report.damaged:
        out.print("no damage found")


def _doctor_devices(data: Path) -> bool:
    """The paired devices file (issue 41): never repaired here (its keys cannot be rebuilt);
    while damaged the remote listener refuses every device and the loopback one is unaffected."""
    from vault_rag.remote.devices import DEVICES_FILE, devices_path, devices_problem

    problem = devices_problem(data)
    present = devices_path(data).exists()
    state = "[green]ok[/]" if present else "[dim]absent[/]"
    if problem is not None:
        state = f"[red]damaged[/]: {escape(problem)}"
    out.print(f"{'paired devices':<24} {DEVICES_FILE:<18} {state}", highlight=False)
    if problem is not None:
        out.print(
            "fix or remove it (removing unpairs every device; pair them again with "
            "`vault-rag devices pair`)"
        )
    return problem is None


def _print_report(report: Any, data: Path) -> None:
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


def _repair(
    data: Path,
    report: Any,
    open_index: Callable[[], Any],
    make: Callable[[Any], Any],
    what: str,
) -> bool:
    """Set the damaged parts of one index aside and rebuild it from its files; True when done."""
    from vault_rag.embeddings.base import EmbeddingError
    from vault_rag.index.lock import IndexLockedError, WriterLock
    from vault_rag.index.vault_index import ModelMismatchError
    from vault_rag.maintenance import doctor as checks

    try:
        lock = WriterLock(data).acquire()
    except IndexLockedError as exc:
        err.print(
            f"[red]error:[/] {escape(str(exc))} (a running `vault-rag serve` repairs at its start)"
        )
        return False
    try:
        checks.repair(data, report)
        for action in report.actions:
            out.print(f"repaired: {action}", highlight=False, markup=False)
        index = open_index()
        try:
            lock.release()  # the indexer takes the writer lock itself
            lock = None
            summary = make(index).run()
        finally:
            index.close()
    except (IndexLockedError, ModelMismatchError, EmbeddingError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return False
    finally:
        if lock is not None:
            lock.release()
    out.print(f"rebuilt {what}: {summary.line()}", highlight=False, markup=False)
    return True


def _doctor_sources(settings: Any, provider: Any, repair: bool) -> bool:
    """The same checks on each source's index (`<data dir>/sources/<name>/`); a damaged one
    is rebuilt from its folder with `--repair` (when the folder can be read)."""
    from vault_rag.maintenance import doctor as checks
    from vault_rag.source_indexes.collections import (
        indexed_sources,
        make_source_indexer,
        open_source,
    )
    from vault_rag.source_indexes.specs import SourceError, resolve_root

    healthy = True
    for spec, folder, root in indexed_sources(settings):
        out.print(f"source {spec.name}: {folder}", highlight=False, markup=False)

        def opened(spec: Any = spec, root: Path = root, recover: bool = False) -> Any:
            return open_source(settings, spec, root, provider, recover=recover)

        report = checks.full_check(folder, opened)
        _print_report(report, folder)
        if not report.damaged:
            continue
        if not repair:
            healthy = False
            continue
        try:
            resolve_root(spec)  # its files must be there to rebuild from
        except SourceError as exc:
            out.print(f"[red]source {escape(spec.name)}:[/] {escape(str(exc))}; not rebuilt")
            healthy = False
            continue
        healthy = (
            _repair(
                folder,
                report,
                opened,
                lambda index, spec=spec: make_source_indexer(settings, spec, index),
                f"source {spec.name} from its folder",
            )
            and healthy
        )
    return healthy
