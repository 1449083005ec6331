"""The `vault-rag` entry point. `vault-rag mcp` starts the MCP server with only the imports it
needs (`mcp_server/stdio.py`). `vault-rag search` first asks a sidecar running on the vault
(`serving/search_client.py`) with light imports only, then searches in this process with the imports
one search needs (`serving/local_search.py`); everything else, and a search whose options only Typer
can judge, goes to the Typer CLI (`vault_rag.cli`), whose import loads every stage."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Options of `vault-rag search` (cli/index_commands.py) that take a value / are flags. Anything
# else (--help, a typo, a value Typer would refuse) leaves the parsing to Typer.
_VALUE_OPTIONS = {"--vault", "--data-dir", "-k", "--folder", "--tag", "--per-note"}
_FLAGS = {"--json", "--explain", "--in-process"}


def parse_search(argv: list[str]) -> object | None:
    """`SearchArgs` for the words after `search`, or None when Typer should parse them."""
    from vault_rag.serving.search_client import SearchArgs

    values: dict[str, str] = {}
    flags: set[str] = set()
    positional: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            positional.extend(words)
            break
        name, eq, inline = word.partition("=")
        if word.startswith("-k") and word != "-k" and not eq:
            name, inline, eq = "-k", word[2:], "="  # -k5
        if name in _VALUE_OPTIONS:
            value = inline if eq else next(words, None)
            if value is None or name in values:
                return None
            values[name] = value
        elif word in _FLAGS:
            flags.add(word)
        elif word.startswith("-") and word != "-":
            return None  # --help, unknown options: Typer
        else:
            positional.append(word)
    vault_text = values.get("--vault", os.environ.get("VAULT_RAG_VAULT"))
    if len(positional) != 1 or not vault_text:
        return None
    try:
        k = int(values["-k"]) if "-k" in values else None
        per_note = int(values["--per-note"]) if "--per-note" in values else None
    except ValueError:
        return None
    if (k is not None and not 1 <= k <= 200) or (per_note is not None and per_note < 1):
        return None
    vault = Path(vault_text).expanduser().resolve()
    if not vault.is_dir():
        return None
    data_dir = values.get("--data-dir")
    return SearchArgs(
        query=positional[0],
        vault=vault,
        data_dir=Path(data_dir).expanduser().resolve() if data_dir else None,
        k=k,
        folder=values.get("--folder"),
        tag=values.get("--tag"),
        per_note=per_note,
        as_json="--json" in flags,
        explain="--explain" in flags,
        in_process="--in-process" in flags,
    )


def parse_mcp(argv: list[str]) -> tuple[Path, Path | None] | None:
    """(vault, data dir) for the words after `mcp` when they are only `--vault` / `--data-dir`
    (or the vault from VAULT_RAG_VAULT); None leaves them to Typer (--help, errors)."""
    values: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        name, eq, inline = word.partition("=")
        if name not in ("--vault", "--data-dir") or name in values:
            return None
        value = inline if eq else next(words, None)
        if value is None:
            return None
        values[name] = value
    vault_text = values.get("--vault", os.environ.get("VAULT_RAG_VAULT"))
    if not vault_text:
        return None
    vault = Path(vault_text).expanduser().resolve()
    if not vault.is_dir():
        return None
    data_dir = values.get("--data-dir")
    return vault, Path(data_dir).expanduser().resolve() if data_dir else None


def main() -> None:
    try:
        run(sys.argv[1:])
    except Exception as exc:
        # A full disk, a read-only mount or an I/O error (`storage/disk_faults.py`; nothing was
        # moved or deleted), or damage only a query could find, under any command: one clear line,
        # not a traceback.
        from vault_rag.storage.disk_faults import EXIT_CODE, disk_fault

        fault = disk_fault(exc)
        if fault is not None:
            sys.stderr.write(f"error: {fault}\n")
            raise SystemExit(EXIT_CODE) from None
        settings_problem = _settings_problem(exc)
        if settings_problem is not None:
            sys.stderr.write(f"error: {settings_problem}\n")
            raise SystemExit(2) from None
        from vault_rag.maintenance.doctor import damaged_database

        damage = damaged_database(exc)
        if damage is None:
            raise
        sys.stderr.write(
            f"error: a database of the index is damaged ({damage}); "
            "`vault-rag doctor --repair` sets it aside and rebuilds it from the vault\n"
        )
        raise SystemExit(1) from None


def _settings_problem(error: BaseException) -> str | None:
    """One line for a settings file that is missing or not TOML, or a setting with a bad value
    (pydantic's message names the setting), else None."""
    from pydantic import ValidationError

    from vault_rag.settings import SettingsFileError

    if isinstance(error, SettingsFileError):
        return str(error)
    if isinstance(error, ValidationError) and error.title == "Settings":
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        return f"invalid settings ({problems})"
    return None


def run(argv: list[str]) -> None:
    if argv[:1] in (["search"], ["ask"]) and any(
        a == "--remote" or a.startswith("--remote=") for a in argv
    ):  # another device of a sidecar's remote listener (docs/remote.md): no index, no model
        from vault_rag.remote.commands import run as run_remote

        raise SystemExit(run_remote(argv[0], argv[1:]))
    if argv[:1] == ["search"]:
        args = parse_search(argv[1:])
        if args is not None:
            from vault_rag.serving.search_client import search_running_server

            code = search_running_server(args)  # type: ignore[arg-type]
            if code is None:  # no sidecar: in this process, still without the Typer CLI
                from vault_rag.serving.local_search import search_in_process

                code = search_in_process(args)  # type: ignore[arg-type]
            raise SystemExit(code)
    if argv[:1] == ["mcp"]:
        parsed = parse_mcp(argv[1:])
        if parsed is not None:  # the MCP server without the Typer CLI's imports
            from vault_rag.mcp_server.stdio import run_stdio

            run_stdio(*parsed)
            return
    from vault_rag.cli import app

    app()
