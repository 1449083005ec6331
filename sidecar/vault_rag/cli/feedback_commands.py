"""Commands for the human in the loop: feedback (rate an answer), promote (save it as a note)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, err, fail, out
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.feedback.answers import UnknownAnswerError
from vault_rag.feedback.promote import PromoteError, promote_by_id
from vault_rag.feedback.store import submit_feedback
from vault_rag.index.lock import IndexLockedError
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.vault_index import ModelMismatchError
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.settings import Settings, load_settings

AnswerIdArgument = Annotated[
    str, typer.Argument(help="The id an answer reported (`vault-rag ask --json`: answer_id).")
]


class Rating(StrEnum):
    up = "up"
    down = "down"


@app.command()
def feedback(
    answer_id: AnswerIdArgument,
    rating: Annotated[Rating, typer.Argument(help="up: a good answer; down: a bad one.")],
    vault: VaultOption,
    data_dir: DataDirOption = None,
    comment: Annotated[str | None, typer.Option("--comment", help="What was good or bad.")] = None,
    wrong: Annotated[
        list[str] | None,
        typer.Option(
            "--wrong", help="A cited source that was wrong: its chunk id or url (repeatable)."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Rate an answer. Its cited sources rise (up) or sink (down) in later searches, a little:
    the feedback prior only re-orders near-ties (see `vault-rag search --explain`)."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    try:
        record = submit_feedback(
            settings.resolved_data_dir(), answer_id, rating.value, comment, wrong or []
        )
    except (UnknownAnswerError, ValueError) as exc:  # unknown id, or a mark on no citation
        fail(str(exc))
        return
    if as_json:
        sys.stdout.write(json.dumps(record.to_dict(), ensure_ascii=False, indent=2) + "\n")
        return
    out.print(
        f"recorded {'👍' if record.rating > 0 else '👎'} for answer {answer_id} "
        f"({len(record.chunk_ids)} cited chunks)",
        highlight=False,
    )
    if not settings.feedback_prior:
        err.print("[yellow]note:[/] the feedback prior is off (feedback_prior = false)")


@app.command()
def promote(
    answer_id: AnswerIdArgument,
    vault: VaultOption,
    data_dir: DataDirOption = None,
    title: Annotated[
        str | None, typer.Option(help="Note title (default: the question's first line).")
    ] = None,
    folder: Annotated[
        str | None, typer.Option(help="Sub-folder of the answers folder to write into.")
    ] = None,
    index_now: Annotated[
        bool, typer.Option("--index/--no-index", help="Index the new note right away.")
    ] = True,
    as_json: JsonOption = False,
) -> None:
    """Save an answer as a new note in the answers folder (`answers_folder` setting), marked
    `origin: promoted`. Never overwrites a note: an existing name gets a number."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    try:
        path = promote_by_id(data, vault, settings.answers_folder, answer_id, title, folder)
    except (UnknownAnswerError, PromoteError) as exc:
        fail(str(exc))
        return
    rel = path.relative_to(vault.resolve()).as_posix()
    indexed = False
    if index_now:
        indexed = _index(settings)
    if as_json:
        payload = {"path": rel, "absolute_path": str(path), "indexed": indexed}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    out.print(f"saved: {rel}", highlight=False, markup=False)


def _index(settings: Settings) -> bool:
    """Index the new note now; when another process holds the index (the server) it does it."""
    try:
        index = open_index(settings)
    except EmbeddingError as exc:
        err.print(f"[yellow]note:[/] not indexed yet: {escape(str(exc))}", highlight=False)
        return False
    try:
        make_indexer(settings, index).run()
        return True
    except (IndexLockedError, ModelMismatchError, EmbeddingError, StoreUnavailableError) as exc:
        err.print(f"[yellow]note:[/] not indexed yet: {escape(str(exc))}", highlight=False)
        return False
    finally:
        index.close()
