"""Commands over the index: index, search, status, config-path."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, fail, out
from vault_rag.embeddings.base import EmbeddingError, EmbeddingProvider
from vault_rag.index.lock import IndexLockedError
from vault_rag.index.status import index_status
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.stores.factory import store_info
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.updates.records import IndexSummary
from vault_rag.index.updates.records import Progress as IndexProgress
from vault_rag.index.vault_index import ModelMismatchError, VaultIndex
from vault_rag.maintenance.doctor import DamagedDataError, diagnose
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.serving.local_search import search_in_process
from vault_rag.serving.search_client import SearchArgs, search_running_server
from vault_rag.settings import Settings, config_file_path, load_settings
from vault_rag.source_indexes.collections import index_sources
from vault_rag.source_indexes.specs import SourceError
from vault_rag.source_indexes.status import sources_status
from vault_rag.vault.exclusions import ExcludeError


def _open(
    vault: object, data_dir: object, *, lazy_store: bool = False
) -> tuple[Settings, VaultIndex]:
    settings = load_settings(vault=vault, data_dir=data_dir)
    try:
        return settings, open_index(settings, lazy_store=lazy_store)
    except (EmbeddingError, DamagedDataError) as exc:
        fail(str(exc))
        raise  # unreachable: fail() exits


def run_with_progress(indexer: Indexer) -> IndexSummary:
    """Run the indexer with a progress bar per phase (chunking, embedding, sections)."""
    with Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=out,
        transient=True,
    ) as bar:
        task = None

        def on_phase(phase: str, total: int) -> None:
            nonlocal task
            if task is not None:
                bar.remove_task(task)
            task = bar.add_task(phase, total=total)

        def on_advance(n: int) -> None:
            if task is not None:
                bar.advance(task, n)

        return indexer.run(IndexProgress(on_phase=on_phase, on_advance=on_advance))


def crawl_line(report: Any) -> str:
    """A web source's crawl in one line (`sources/web/crawl.CrawlReport`)."""
    if report.unreachable:
        return f"the site did not answer ({report.unreachable}); its pages are kept as fetched"
    return (
        f"crawl: {report.fetched} requests, {report.kept} pages new or changed, "
        f"{report.unchanged} unchanged, {report.removed} removed, {report.skipped} skipped, "
        f"{report.problems} problems (`vault-rag status`)"
        + (" (resumed)" if report.resumed else "")
    )


@app.command()
def index(
    vault: VaultOption,
    data_dir: DataDirOption = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Forget the index and re-embed every note.")
    ] = False,
) -> None:
    """Index the vault incrementally: only new or changed notes (and notes embedding them) are
    re-chunked, and only changed chunks are embedded."""
    settings, vault_index = _open(vault, data_dir, lazy_store=not rebuild)
    try:
        indexer = make_indexer(settings, vault_index)
    except ExcludeError as exc:  # never guess "nothing excluded": that would index them
        vault_index.close()
        fail(str(exc))
    out.print(f"index: {vault_index.data_dir}", highlight=False, markup=False)
    try:
        if rebuild:
            with indexer.lock:
                vault_index.clear()
        summary = run_with_progress(indexer)
    except (IndexLockedError, ModelMismatchError, EmbeddingError) as exc:
        fail(str(exc))
    except StoreUnavailableError as exc:
        fail(
            f"{exc}. Notes are chunked and searchable by BM25; their vectors wait in the "
            "manifest: run `vault-rag index` again once the store answers (nothing is re-embedded)"
        )
    except KeyboardInterrupt:
        out.print("interrupted: finished work is kept; run `vault-rag index` again to resume")
        raise typer.Exit(130) from None
    finally:
        vault_index.close()
    out.print(summary.line(), highlight=False)
    if summary.warnings:
        out.print(
            f"{summary.warnings} warnings: see `vault-rag status --vault {vault}`", markup=False
        )
    if not index_every_source(settings, vault_index.provider, rebuild=rebuild):
        raise typer.Exit(1)


def index_every_source(settings: Settings, provider: EmbeddingProvider, *, rebuild: bool) -> bool:
    """The sources beside the vault (`source_indexes/collections.py`), each reported; False when one
    could not be indexed (the others were)."""
    try:
        runs = index_sources(settings, provider, rebuild=rebuild, run=run_with_progress)
    except SourceError as exc:
        out.print(f"[red]sources:[/] {escape(str(exc))}")
        return False
    for run in runs:
        if run.removed:
            out.print(f"source {run.name}: no longer declared, its index removed", markup=False)
        elif run.error:
            out.print(f"[red]source {escape(run.name)}:[/] {escape(run.error)}")
        elif run.summary is not None:
            if run.crawl is not None:
                out.print(f"source {run.name}: {crawl_line(run.crawl)}", markup=False)
            out.print(f"source {run.name}: {run.summary.line()}", markup=False, highlight=False)
    return not any(run.error for run in runs)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in any language.")],
    vault: VaultOption,
    data_dir: DataDirOption = None,
    k: Annotated[
        int | None,
        typer.Option("-k", min=1, max=200, help="How many results (default: the top_k setting)."),
    ] = None,
    folder: Annotated[str | None, typer.Option(help="Only notes under this folder.")] = None,
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag.")] = None,
    per_note: Annotated[
        int | None, typer.Option("--per-note", min=1, help="At most this many chunks per note.")
    ] = None,
    as_json: JsonOption = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each result's base score and feedback prior.")
    ] = False,
    collection: Annotated[
        list[str] | None,
        typer.Option(
            "--collection",
            help="Search this collection: `vault` or a source's name (repeat; default: the "
            "default_collections setting, every one unless it says `vault`).",
        ),
    ] = None,
    in_process: Annotated[
        bool,
        typer.Option(
            "--in-process",
            help="Search in this process even when a sidecar (`vault-rag serve`) runs on this "
            "index (by default the search asks it: no index to open, no model to load).",
        ),
    ] = False,
) -> None:
    """Hybrid search (dense + BM25) over the index, re-ordered by the feedback prior. With a
    sidecar running on this index (`vault-rag serve`), it answers (its settings apply).
    From another device: `search QUERY --remote URL --device-file FILE [--json]` asks a paired
    sidecar's remote listener instead (no --vault; docs/remote.md)."""
    args = SearchArgs(
        query,
        vault,
        data_dir,
        k,
        folder,
        tag,
        per_note,
        as_json,
        explain,
        in_process,
        tuple(collection or ()),
    )
    if search_running_server(args) is not None:
        return
    code = search_in_process(args, console=out)
    if code:
        raise typer.Exit(code)


@app.command()
def status(
    vault: VaultOption,
    data_dir: DataDirOption = None,
    note: Annotated[str | None, typer.Option(help="Show the index state of one note.")] = None,
    as_json: JsonOption = False,
) -> None:
    """What the index holds, what is still pending and an estimate of the time left."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    damaged = diagnose(data).damaged if data.exists() else []
    if damaged:  # status only reads: it reports the damage, `doctor --repair` / `serve` fix it
        lines = [f"{f.part.path}: {f.problem}" for f in damaged]
        if as_json:
            payload = {"data_dir": str(data), "damaged": lines}
            sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
            raise typer.Exit(1)
        fail(
            f"the data dir {data} has damaged files ({'; '.join(lines)}). "
            f"`vault-rag doctor --vault {vault} --repair` moves them aside and rebuilds the "
            "index from the vault (`vault-rag serve` and `vault-rag index` do so too)"
        )
    info = index_status(data, note)
    if info.get("model_id"):
        wanted = store_info(settings, vault, data, info["model_id"])
        info["configured_store"] = wanted.describe()
        if info.get("vector_store") and (info["vector_store"], info["collection"]) != (
            wanted.kind,
            wanted.collection,
        ):
            info["store_mismatch"] = (
                f"the settings select {wanted.describe()}; run `vault-rag migrate --to "
                f"{wanted.kind} --vault {vault}` (or `vault-rag index --rebuild`)"
            )
    sources = sources_status(settings)
    if sources:  # each source beside the vault, its own index (no source: output unchanged)
        info["sources"] = sources
    if as_json:
        sys.stdout.write(json.dumps(info, ensure_ascii=False, indent=2) + "\n")
        return
    table = Table(title=f"index of {vault}")
    table.add_column("measure")
    table.add_column("value")
    for key, value in info.items():
        if key in ("warnings", "note_state", "sources", "ignored_files"):
            continue
        table.add_row(key, str(value))
    out.print(table)
    for name, source in sources.items():
        print_source_status(name, source)
    for w in info.get("warnings", [])[:50]:
        out.print(
            "[yellow]warning[/] "
            + escape(f"{w['code']} {w['note']}: {w['message']}")
            + (f" [dim](×{w['count']})[/]" if w["count"] > 1 else ""),
            highlight=False,
        )
    if info.get("note_state"):
        out.print(info["note_state"])


def print_source_status(name: str, source: dict) -> None:
    if source.get("problem"):
        out.print(f"[red]source {escape(name)}:[/] {escape(source['problem'])}")
    held = (
        f"{source.get('notes', 0)} files, {source.get('chunks', 0)} units "
        f"({source.get('pending', 0)} pending), {source.get('warnings_count', 0)} warnings, "
        f"{source.get('ignored', 0)} left out by its rules"
    )
    out.print(f"source {name} ({source.get('kind')}, {source.get('path')}): {held}", markup=False)
    for w in source.get("warnings", [])[:20]:
        out.print("  [yellow]warning[/] " + escape(f"{w['code']} {w['note']}: {w['message']}"))
    for skipped in source.get("ignored_files", [])[:20]:
        out.print(f"  [dim]left out[/] {escape(skipped['path'])}: {escape(skipped['why'])}")


@app.command("config-path")
def config_path() -> None:
    """Print where the settings file is read from (see docs/settings.example.toml)."""
    sys.stdout.write(f"{config_file_path()}\n")
