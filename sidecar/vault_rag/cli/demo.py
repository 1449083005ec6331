"""`vault-rag demo`: the main job on the bundled sample vault, as a newcomer first sees it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from vault_rag.cli.app import DataDirOption, app, err, out
from vault_rag.cli.ask_commands import ask
from vault_rag.cli.index_commands import run_with_progress
from vault_rag.retrieval.hybrid import hybrid_search, search_options
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.serving.sample import sample_vault_path
from vault_rag.settings import load_settings

DEMO_QUESTION = "为什么我存在数组里的指针过一阵子就变成野指针然后崩溃？"


@app.command()
def demo(
    data_dir: DataDirOption = None,
    question: Annotated[str, typer.Option(help="What to search for.")] = DEMO_QUESTION,
) -> None:
    """Index, search and ask the bundled sample vault (Chinese and English UE notes)."""
    vault = sample_vault_path()
    out.print(f"[bold]Sample vault:[/] {escape(str(vault))}", highlight=False)
    settings = load_settings(vault=vault, data_dir=data_dir)
    index = open_index(settings)
    try:
        out.print(f"[bold]Indexing[/] into {escape(str(index.data_dir))}", highlight=False)
        out.print(run_with_progress(make_indexer(settings, index)).line(), highlight=False)
        for w in index.manifest.warnings():
            err.print(
                "[yellow]warning[/] "
                + escape(f"{w['code']} {w['note']}:{w['line']}: {w['message']}")
            )
        results = hybrid_search(index, question, search_options(settings, k=5))
    finally:
        index.close()
    table = Table(title=f"search: {question}")
    for column in ("#", "note", "heading", "lines"):
        table.add_column(column)
    for i, r in enumerate(results, 1):
        table.add_row(str(i), r.note_path, r.heading_path, f"{r.line_start}-{r.line_end}")
    out.print(table)
    out.print(f"\n[bold]ask:[/] {escape(str(question))}", highlight=False)
    ask(question=question, vault=vault, data_dir=data_dir)
