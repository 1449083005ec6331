"""`vault-rag eval-answers`: score the answer graph's answers over a question-answer file."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, err, fail, out
from vault_rag.cli.ask_commands import _refresh_index
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.index.vault_index import ModelMismatchError
from vault_rag.serving.context import open_index
from vault_rag.settings import load_settings
from vault_rag.source_indexes.service import ServedSources


@app.command("eval-answers")
def eval_answers(
    qa_file: Annotated[
        Path,
        typer.Argument(
            help="QA file: one JSON object per line with id, question, gold, kind.",
            exists=True,
            dir_okay=False,
        ),
    ],
    vault: VaultOption,
    data_dir: DataDirOption = None,
    label: Annotated[
        str | None,
        typer.Option("--label", help="Name of this configuration in the table (default: model)."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N questions.", min=1)
    ] = None,
    every: Annotated[
        int,
        typer.Option(
            "--every",
            help="Every Nth answerable question plus every off-topic one (slow models).",
            min=1,
        ),
    ] = 1,
    as_json: JsonOption = False,
) -> None:
    """Run `ask` over every question of QA_FILE with the configured model (none: extractive)
    and report grounded rate, right-note citations, off-topic declined, model calls, tokens
    and time to the first answer token. Searches what `ask` searches (the vault and the sources
    beside it). Indexes new and changed notes first."""
    from vault_rag.graph.config import Resources
    from vault_rag.graph.evaluate import (
        AnswerRecord,
        evaluate_answers,
        load_qa,
        markdown_table,
        subset,
    )

    try:
        items = subset(load_qa(qa_file), every)[:limit]
    except (ValueError, UnicodeDecodeError) as exc:
        fail(str(exc))
        return
    settings = load_settings(vault=vault, data_dir=data_dir)
    try:
        index = open_index(settings)
    except EmbeddingError as exc:
        fail(str(exc))
        return
    sources: ServedSources | None = None
    try:
        _refresh_index(settings, index, quiet=as_json)
        resources = Resources.from_settings(settings, index=index)
        # the collections `ask` searches: the vault and the sources beside it
        resources.sources = sources = ServedSources(settings, index)
        name = label or (resources.llm.label if resources.llm else "no model (extractive)")

        def show(record: AnswerRecord) -> None:
            # One line per answered question on stderr, also when it is a log file: a slow
            # model's run can be followed (and a cut-short one read) while it goes.
            outcome = "declined" if record.declined else f"right note {record.right_note}"
            err.print(
                f"[dim]· {record.id}: {outcome}, {record.llm_calls} model calls, "
                f"{record.total_s:.0f} s{', error: ' + record.error if record.error else ''}[/]",
                highlight=False,
                soft_wrap=True,
            )

        report = asyncio.run(evaluate_answers(items, resources, name, on_answer=show))
    except (ModelMismatchError, EmbeddingError) as exc:
        fail(str(exc))
        return
    finally:
        if sources is not None:
            sources.close()
        index.close()
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
        return
    out.print(markdown_table([report.summary()]), highlight=False, soft_wrap=True)
