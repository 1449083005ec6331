"""Commands that use the answer graph or the chat model: ask, check-typos."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, err, fail, out
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.index.lock import IndexLockedError
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.vault_index import ModelMismatchError, VaultIndex
from vault_rag.retrieval.collections import UnknownCollectionError
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.settings import Settings, load_settings
from vault_rag.source_indexes.service import ServedSources
from vault_rag.vault.exclusions import ExcludeError, Exclusions


class Mode(StrEnum):
    strict = "strict"
    hybrid = "hybrid"


def _refresh_index(settings: Settings, index: VaultIndex, quiet: bool) -> str | None:
    """Index new and changed notes first (incremental: usually nothing to do). Returns a note
    when the index could not be refreshed but answering can go on."""
    indexer = make_indexer(settings, index)  # same chunking settings as `vault-rag index`
    try:
        summary = indexer.run()
    except IndexLockedError as exc:
        return f"the index is being updated by another process, answering from it as it is ({exc})"
    except StoreUnavailableError as exc:
        return f"the vector store cannot be reached, answering from BM25 alone ({exc})"
    if not quiet and (summary.notes_changed or summary.notes_deleted or summary.chunks_embedded):
        err.print(f"[dim]indexed: {escape(str(summary.line()))}[/]", highlight=False)
    return None


def _print_citations(citations: list[dict[str, Any]]) -> None:
    if not citations:
        return
    out.print("\nSources:", style="bold")
    for c in citations:
        if c.get("kind") == "web":
            out.print(f"  {c['url']}", highlight=False, markup=False)
        else:
            where = f"{c['note_path']}" + (f" › {c['heading']}" if c.get("heading") else "")
            anchor = c.get("anchor") or ""
            if anchor.startswith("page="):  # a PDF: its page, and the link that opens it there
                span = f"page {anchor.removeprefix('page=')}, {c['cite']}"
            elif c["note_path"].lower().endswith(".canvas"):
                span = c["cite"]  # a canvas card has no lines
            else:
                span = f"lines {c['line_start']}–{c['line_end']}"
            # soft wrap: a link is never cut in two (the terminal wraps the line as it is)
            out.print(f"  {where}  ({span})", highlight=False, markup=False, soft_wrap=True)


def _about(index: VaultIndex, note: str, selection: str | None) -> dict[str, Any]:
    """`--about NOTE`: a vault-relative path (with or without .md) or a note name, as a link
    would resolve it among the indexed notes."""
    from vault_rag.vault.links import NoteIndex
    from vault_rag.vault.paths import UnsafePathError, normalize_rel_path

    try:
        candidate = normalize_rel_path(note)
    except UnsafePathError as exc:
        raise typer.BadParameter(str(exc), param_hint="--about") from exc
    found = NoteIndex(index.manifest.notes()).resolve(candidate, "")
    if found is None:
        raise typer.BadParameter(f"no indexed note {note!r}", param_hint="--about")
    return {"path": found, "selection": selection or "", "links": []}


async def _ask(
    question: str,
    settings: Settings,
    index: VaultIndex,
    thread: str | None,
    as_json: bool,
    note: dict[str, Any] | None = None,
    sources: Any = None,
    collections: list[str] | None = None,
) -> tuple[dict[str, Any] | None, str | None]:
    from vault_rag.graph.config import Resources
    from vault_rag.graph.run import open_checkpointer, run_question

    resources = Resources.from_settings(settings, index=index)
    resources.sources = sources
    configuration = replace(resources.defaults, collections=collections or None)
    final: dict[str, Any] | None = None
    streamed = False
    progress_visible = not as_json and sys.stderr.isatty()
    async with open_checkpointer(index.data_dir) as saver:
        answers = run_question(
            question,
            resources,
            configuration=configuration,
            checkpointer=saver,
            thread_id=thread,
            note=note,
        )
        async for event in answers:
            if event.event == "error":
                return None, event.data["message"]
            if event.event == "delta" and not as_json:
                sys.stdout.write(event.data["text"])
                sys.stdout.flush()
                streamed = True
            elif event.event == "progress" and event.data.get("reset") and streamed:
                sys.stdout.write("\n\n[the model failed; falling back]\n\n")
            elif event.event == "progress" and progress_visible:
                err.print(f"[dim]· {escape(str(event.data['node']))}[/]", highlight=False)
            elif event.event == "final":
                final = event.data
    if final is not None and not as_json and not streamed:
        sys.stdout.write(final["answer"])  # e.g. a declined question: nothing was streamed
    return final, None


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="Your question, in any language.")],
    vault: VaultOption,
    data_dir: DataDirOption = None,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread", help="Continue this conversation (the id a previous answer reported)."
        ),
    ] = None,
    mode: Annotated[
        Mode | None,
        typer.Option(
            "--mode", help="strict: the vault only; hybrid: the web too (needs a Tavily key)."
        ),
    ] = None,
    about: Annotated[
        str | None,
        typer.Option(
            "--about",
            help="Ask about this note (path or name): its passages and linked notes come first.",
        ),
    ] = None,
    selection: Annotated[
        str | None,
        typer.Option("--selection", help="With --about: text of that note to search as well."),
    ] = None,
    collection: Annotated[
        list[str] | None,
        typer.Option(
            "--collection",
            help="Take evidence from this collection: `vault` or a source's name (repeat; "
            "default: the default_collections setting).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Answer a question from the vault, citing the notes. Indexes new and changed notes first.
    Without a configured language model the answer quotes the most relevant passages.
    From another device: `ask QUESTION --remote URL --device-file FILE [--json]` asks a paired
    sidecar's remote listener instead (no --vault; docs/remote.md)."""
    settings = load_settings(vault=vault, data_dir=data_dir, web_mode=mode.value if mode else None)
    try:
        index = open_index(settings)
    except EmbeddingError as exc:
        fail(str(exc))
        return
    sources: ServedSources | None = None
    try:
        note = _refresh_index(settings, index, quiet=as_json)
        focus = _about(index, about, selection) if about else None
        sources = ServedSources(settings, index)
        sources.indexes(collection)  # an unknown name fails here, before anything runs
        final, error = asyncio.run(
            _ask(question, settings, index, thread, as_json, focus, sources, collection)
        )
    except (ModelMismatchError, EmbeddingError, UnknownCollectionError) as exc:
        fail(str(exc))
        return
    finally:
        if sources is not None:
            sources.close()
        index.close()
    if error is not None or final is None:
        fail(error or "no answer was produced")
        return
    if note:
        final["notes"] = [note, *final["notes"]]
    if as_json:
        sys.stdout.write(json.dumps(final, ensure_ascii=False, indent=2) + "\n")
        return
    sys.stdout.write("\n")
    if final.get("focus"):
        f = final["focus"]
        err.print(
            f"[dim]about {escape(f['path'])}: {f['cited']} of the sources from it, "
            f"{f['cited_linked']} from its {f['linked']} linked notes[/]",
            highlight=False,
        )
    _print_citations(final["citations"])
    for line in final["notes"]:
        err.print(f"[yellow]note:[/] {escape(str(line))}", highlight=False)
    err.print(
        f"[dim]model calls {final['llm_calls']} (+{final['repair_retries']} repairs), tokens "
        f"{final['prompt_tokens']} in / {final['completion_tokens']} out · thread "
        f"{final['thread_id']}[/]",
        highlight=False,
    )


@app.command("check-typos")
def check_typos(
    vault: VaultOption,
    data_dir: DataDirOption = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for the report (default: <data dir>/reports).",
            file_okay=False,
            resolve_path=True,
        ),
    ] = None,
    note: Annotated[
        list[str] | None,
        typer.Option("--note", help="Only this note (repeatable; vault-relative path)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Ask the language model for likely typos in each note and write a report (note, line,
    suspect, context, suggestion). Notes are never edited."""
    from vault_rag.graph.llm import build_chat_provider
    from vault_rag.services.typos import check_vault, write_report

    settings = load_settings(vault=vault, data_dir=data_dir)
    model = build_chat_provider(settings)
    if model is None:
        fail(
            "check-typos needs a language model: set VAULT_RAG_LLM_MODEL (and "
            "VAULT_RAG_LLM_BASE_URL for a local OpenAI-compatible server)"
        )
        return
    target = out_dir or settings.resolved_data_dir() / "reports"

    def on_note(path: str, found: int) -> None:
        if not as_json:
            err.print(f"[dim]{escape(str(path))}: {escape(str(found))}[/]", highlight=False)

    try:  # excluded folders are private: never sent to the model
        ignores = Exclusions.load(settings, settings.resolved_data_dir()).ignores()
    except ExcludeError as exc:
        fail(str(exc))
        return
    report = asyncio.run(check_vault(vault, model, ignores=ignores, only=note, on_note=on_note))
    files = write_report(report, target)
    if as_json:
        sys.stdout.write(
            json.dumps(
                {**report.to_dict(), "files": [str(f) for f in files]}, ensure_ascii=False, indent=2
            )
            + "\n"
        )
        return
    out.print(
        f"{len(report.typos)} likely typos in {report.notes_checked} notes",
        highlight=False,
        markup=False,
    )
    for f in files:
        out.print(f"report: {f}", highlight=False, markup=False)
    for problem in report.errors:
        err.print(f"[yellow]warning:[/] {escape(str(problem))}", highlight=False)
