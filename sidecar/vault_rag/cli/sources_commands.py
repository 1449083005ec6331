"""`vault-rag sources list|add|remove`: the sources indexed beside the vault, each its own
collection (`source_indexes/collections.py`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, fail, out
from vault_rag.index.manifest import Manifest
from vault_rag.settings import load_settings
from vault_rag.source_indexes import manage
from vault_rag.source_indexes.collections import source_data_dir
from vault_rag.source_indexes.specs import SourceError, added_specs, all_specs, check_specs

sources_app = typer.Typer(
    help="Sources beside the vault: code trees, other vaults, doc folders, online docs."
)
app.add_typer(sources_app, name="sources")


@sources_app.command("list")
def list_sources(
    vault: VaultOption, data_dir: DataDirOption = None, as_json: JsonOption = False
) -> None:
    """Every source: its kind, path, whether it can be indexed and what its index holds."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    try:
        specs = all_specs(settings, data)
    except SourceError as exc:
        fail(str(exc))
    added = {spec.name for spec in added_specs(data)}
    checked = check_specs(vault, specs, data)
    rows = []
    for spec in specs:
        problem = checked[spec.name]
        rows.append(
            {
                "name": spec.name,
                "kind": spec.kind,
                "path": spec.location,
                "url": spec.url,
                "max_pages": spec.max_pages,
                "declared_in": "sources.json" if spec.name in added else "settings",
                "include": spec.include,
                "exclude": spec.exclude,
                "problem": str(problem) if isinstance(problem, SourceError) else None,
                **_held(source_data_dir(data, spec.name)),
            }
        )
    if as_json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return
    table = Table(title=f"sources beside {vault}")
    for column in ("name", "kind", "path", "files", "units", "warnings", "ignored", "problem"):
        table.add_column(column)
    for row in rows:
        table.add_row(*(str(row[c] if row[c] is not None else "") for c in table_columns(table)))
    out.print(table)


def table_columns(table: Table) -> list[str]:
    return [str(column.header) for column in table.columns]


def _held(folder: Path) -> dict[str, int]:
    if not (folder / "manifest.sqlite3").is_file():
        return {"files": 0, "units": 0, "warnings": 0, "ignored": 0}
    manifest = Manifest(folder / "manifest.sqlite3")
    try:
        counts = manifest.counts()
        return {
            "files": len(manifest.notes()),
            "units": counts["chunks"],
            "warnings": counts["warnings"],
            "ignored": counts["ignored"],  # left out by its rules (`vault-rag status` lists them)
        }
    finally:
        manifest.close()


@sources_app.command("add")
def add_source(
    name: Annotated[str, typer.Argument(help="Its collection name: a-z, 0-9, _ and -.")],
    path: Annotated[str, typer.Argument(help="The folder; for --kind web, the start URL.")],
    vault: VaultOption,
    kind: Annotated[
        str,
        typer.Option(
            help="code (a source tree), vault (another vault), markdown, or web (online "
            "documentation: PATH is its http(s) start URL)."
        ),
    ] = "code",
    include: Annotated[
        list[str] | None,
        typer.Option(help="Only files matching (gitignore-style; web: URL paths; repeat)."),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(help="Leave out (gitignore-style; web: URL paths; repeat)."),
    ] = None,
    max_pages: Annotated[
        int | None,
        typer.Option(help="web: keep at most this many pages (default: web_max_pages)."),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Add a source (kept in the vault's data dir); `vault-rag index` then indexes it. A web
    source is fetched only by `vault-rag index` and the server's refresh, only from its URL's
    origin and folder."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    try:
        spec = manage.new_spec(name, kind, path, include, exclude, max_pages)
        manage.add_source(settings, vault, spec)
    except SourceError as exc:
        fail(str(exc))
    out.print(
        f"added source {name!r} ({spec.kind}, {spec.location}): run `vault-rag index`",
        markup=False,
    )


@sources_app.command("remove")
def remove_source(
    name: Annotated[str, typer.Argument(help="The source's name.")],
    vault: VaultOption,
    data_dir: DataDirOption = None,
) -> None:
    """Remove a source added with `sources add`, and its index (the folder is not touched)."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    try:
        removed = manage.remove_source(settings, name)
    except SourceError as exc:
        fail(str(exc))
    out.print(
        f"removed source {name!r}" + (" and its index" if removed else " (it had no index)"),
        markup=False,
    )
