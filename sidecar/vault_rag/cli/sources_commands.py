"""`vault-rag sources list|add|remove`: the sources indexed beside the vault, each its own
collection (`source_indexes/collections.py`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from pydantic import ValidationError
from rich.table import Table

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, fail, out
from vault_rag.index.manifest import Manifest
from vault_rag.settings import SourceSpec, load_settings
from vault_rag.source_indexes.collections import remove_source_data, source_data_dir
from vault_rag.source_indexes.specs import (
    VAULT,
    SourceError,
    added_specs,
    all_specs,
    check_specs,
    save_added,
)

sources_app = typer.Typer(help="Sources beside the vault: code trees, other vaults, doc folders.")
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
    checked = check_specs(vault, specs)
    rows = []
    for spec in specs:
        problem = checked[spec.name]
        rows.append(
            {
                "name": spec.name,
                "kind": spec.kind,
                "path": str(spec.path),
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
    path: Annotated[Path, typer.Argument(help="The folder.")],
    vault: VaultOption,
    kind: Annotated[
        str, typer.Option(help="code (a source tree), vault (another vault) or markdown.")
    ] = "code",
    include: Annotated[
        list[str] | None, typer.Option(help="Only files matching (gitignore-style; repeat).")
    ] = None,
    exclude: Annotated[
        list[str] | None, typer.Option(help="Leave out (gitignore-style; repeat).")
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Add a source (kept in the vault's data dir); `vault-rag index` then indexes it."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    try:
        spec = SourceSpec(
            name=name,
            path=path.expanduser().resolve(),
            kind=_kind(kind),
            include=include or [],
            exclude=exclude or [],
        )
        existing = all_specs(settings, data)
        if name == VAULT or any(other.name == name for other in existing):
            raise SourceError(f"the name {name!r} is taken: choose another")
        specs = [*existing, spec]
        problem = check_specs(vault, specs)[name]
        if isinstance(problem, SourceError):
            raise problem
    except (SourceError, ValidationError, ValueError) as exc:
        fail(_message(exc))
    save_added(data, [*added_specs(data), spec])
    out.print(
        f"added source {name!r} ({spec.kind}, {spec.path}): run `vault-rag index`", markup=False
    )


def _kind(word: str) -> Literal["code", "vault", "markdown"]:
    if word not in ("code", "vault", "markdown"):
        raise SourceError(f"--kind must be code, vault or markdown, not {word!r}")
    return word  # type: ignore[return-value]


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return str(exc)


@sources_app.command("remove")
def remove_source(
    name: Annotated[str, typer.Argument(help="The source's name.")],
    vault: VaultOption,
    data_dir: DataDirOption = None,
) -> None:
    """Remove a source added with `sources add`, and its index (the folder is not touched)."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    if name == VAULT:
        fail("the vault itself is not a source")
    if any(spec.name == name for spec in settings.sources):
        fail(
            f"source {name!r} is declared in the settings file: remove it there; the next "
            "`vault-rag index` removes its index"
        )
    added = added_specs(data)
    if not any(spec.name == name for spec in added):
        fail(f"no source named {name!r} (`vault-rag sources list`)")
    save_added(data, [spec for spec in added if spec.name != name])
    removed = remove_source_data(settings, name)
    out.print(
        f"removed source {name!r}" + (" and its index" if removed else " (it had no index)"),
        markup=False,
    )
