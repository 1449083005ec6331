"""Commands that look at notes without an index: resolve, chunks, stats."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from vault_rag.chunking.chunker import ChunkOptions, chunk_note
from vault_rag.chunking.pipeline import chunk_vault_note
from vault_rag.cli.app import JsonOption, VaultOption, app, fail, out, print_warnings
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.serving.context import build_provider, chunk_options
from vault_rag.settings import Settings, load_settings
from vault_rag.vault.embeds import resolve_note
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.listing import iter_note_paths
from vault_rag.vault.paths import UnsafePathError, normalize_rel_path
from vault_rag.vault.types import ResolvedNote, VaultWarning


def _find_note(vault: Path, index: NoteIndex, note: str) -> str:
    """Accept a vault-relative path (with or without .md) or a note name, as a link would."""
    try:
        candidate = normalize_rel_path(note)
    except UnsafePathError as exc:
        raise typer.BadParameter(str(exc), param_hint="NOTE") from exc
    found = index.resolve(candidate, "")
    if found is None:
        raise typer.BadParameter(f"no note {note!r} in vault {vault}", param_hint="NOTE")
    return found


def _resolve(vault: Path, note: str, ignores: list[str] | None = None) -> ResolvedNote:
    index = NoteIndex.from_vault(vault, *([ignores] if ignores is not None else []))
    return resolve_note(vault, _find_note(vault, index, note), index)


def _index_options(vault: Path) -> tuple[Settings, ChunkOptions]:
    """The settings and chunk options the index uses for this vault (same builder), so these
    commands show exactly the chunks the index holds under the current model."""
    settings = load_settings(vault=vault)
    try:
        return settings, chunk_options(settings, build_provider(settings))
    except EmbeddingError as exc:
        fail(str(exc))
        raise  # unreachable: fail() exits


@app.command()
def resolve(
    note: Annotated[str, typer.Argument(help="Note path relative to the vault, or its name.")],
    vault: VaultOption,
    as_json: JsonOption = False,
) -> None:
    """Print a note with every ![[embed]] resolved, as Obsidian shows it."""
    resolved = _resolve(vault, note)
    if as_json:
        payload = {
            "path": resolved.path,
            "text": resolved.text,
            "frontmatter": resolved.frontmatter,
            "dependencies": resolved.dependencies,
            "spans": [s.__dict__ for s in resolved.spans],
            "warnings": [w.to_dict() for w in resolved.warnings],
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str) + "\n")
        return
    sys.stdout.write(resolved.text if resolved.text.endswith("\n") else resolved.text + "\n")
    print_warnings(resolved.warnings)


@app.command()
def chunks(
    note: Annotated[str, typer.Argument(help="Note path relative to the vault, or its name.")],
    vault: VaultOption,
    as_json: JsonOption = False,
) -> None:
    """Show how a note is cut into chunks (after embed resolution), exactly as the index cuts
    it under the current settings and embedding model."""
    settings, options = _index_options(vault)
    resolved = _resolve(vault, note, settings.ignore)
    result = chunk_note(resolved, options)
    if as_json:
        payload = {
            "chunks": [c.to_dict() for c in result],
            "warnings": [w.to_dict() for w in resolved.warnings],
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str) + "\n")
        return
    table = Table(title=Text(f"{resolved.path}: {len(result)} chunks"))
    for column in ("#", "lines", "tokens", "size", "code", "origin", "hierarchy"):
        table.add_column(column)
    for i, c in enumerate(result, 1):
        table.add_row(
            str(i),
            f"{c.line_start}-{c.line_end}",
            str(c.extra.get("tokens", "")),
            str(c.size),
            "yes" if c.has_code else "",
            Text(c.origin if c.origin != c.note_path else ""),
            Text(c.hierarchy_path),
        )
    out.print(table)
    print_warnings(resolved.warnings)


@app.command()
def stats(vault: VaultOption) -> None:
    """Resolve and chunk every note of a vault; print chunk statistics and all warnings."""
    print_vault_stats(vault)


def print_vault_stats(vault: Path) -> None:
    settings, options = _index_options(vault)
    index = NoteIndex.from_vault(vault, settings.ignore)
    sizes: list[int] = []
    tokens: list[int] = []
    notes = with_embeds = 0
    warnings: list[VaultWarning] = []
    for rel in iter_note_paths(vault, settings.ignore):
        notes += 1
        result = chunk_vault_note(vault, rel, index, options)
        sizes.extend(c.size for c in result.chunks)
        tokens.extend(c.extra.get("tokens", 0) for c in result.chunks)
        with_embeds += bool(result.note.dependencies)
        warnings.extend(result.warnings)
    table = Table(title=Text(f"Chunks of {vault.name}"))
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("notes", str(notes))
    table.add_row("notes that embed others", str(with_embeds))
    table.add_row("chunks", str(len(sizes)))
    if sizes:
        table.add_row("chunk size median (units)", f"{statistics.median(sizes):.0f}")
        table.add_row("chunk size min / max", f"{min(sizes)} / {max(sizes)}")
        table.add_row("model tokens median (with header)", f"{statistics.median(tokens):.0f}")
        table.add_row("model tokens min / max", f"{min(tokens)} / {max(tokens)}")
    table.add_row("warnings", str(len(warnings)))
    out.print(table)
    print_warnings(warnings)
