"""`vault-rag demo`: the main job on the bundled sample vault, as a newcomer first sees it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from vault_rag.cli.app import DataDirOption, app, err, out
from vault_rag.cli.ask_commands import ask
from vault_rag.cli.index_commands import run_with_progress
from vault_rag.retrieval.hybrid import SearchResult, hybrid_search, search_options
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.serving.sample import sample_vault_path
from vault_rag.settings import load_settings

DEMO_QUESTION = "为什么我存在数组里的指针过一阵子就变成野指针然后崩溃？"
# Answered by page 2 of the sample vault's one PDF (`Tools/Perforce Handbook.pdf`).
DEMO_PDF_QUESTION = "Perforce 里怎么避免两个人同时改同一张地图？"


def _where(r: SearchResult) -> str:
    """Where the passage is: a PDF's pages, a note's lines (a canvas card has neither)."""
    if r.page is not None:
        end = r.page_end or r.page
        return f"page {r.page}" if end == r.page else f"pages {r.page}-{end}"
    return "" if r.kind == "canvas" else f"lines {r.line_start}-{r.line_end}"


def _table(question: str, results: list[SearchResult]) -> Table:
    # (imported here: every command imports this module, and the graph loads LangGraph)
    from vault_rag.graph.sources import cite_of

    table = Table(title=f"search: {question}")
    for column in ("#", "cite", "heading", "where"):
        table.add_column(column)
    for i, r in enumerate(results, 1):
        table.add_row(str(i), escape(cite_of(r)), escape(r.heading_path), _where(r))
    return table


@app.command()
def demo(
    data_dir: DataDirOption = None,
    question: Annotated[str, typer.Option(help="What to search for.")] = DEMO_QUESTION,
    pdf_question: Annotated[
        str,
        typer.Option(
            help="A second question, answered by the sample vault's PDF (cited to its page); "
            "empty: skip it."
        ),
    ] = DEMO_PDF_QUESTION,
) -> None:
    """Index, search and ask the bundled sample vault (Chinese and English UE notes, a PDF and a
    canvas)."""
    vault = sample_vault_path()
    out.print(f"[bold]Sample vault:[/] {escape(str(vault))}", highlight=False)
    settings = load_settings(vault=vault, data_dir=data_dir)
    questions = [q for q in (question, pdf_question) if q.strip()]
    index = open_index(settings)
    try:
        out.print(f"[bold]Indexing[/] into {escape(str(index.data_dir))}", highlight=False)
        out.print(run_with_progress(make_indexer(settings, index)).line(), highlight=False)
        for w in index.manifest.warnings():
            err.print(
                "[yellow]warning[/] "
                + escape(f"{w['code']} {w['note']}:{w['line']}: {w['message']}")
            )
        found = [hybrid_search(index, q, search_options(settings, k=5)) for q in questions]
    finally:
        index.close()
    for q, results in zip(questions, found, strict=True):
        out.print(_table(q, results))
        out.print(f"\n[bold]ask:[/] {escape(str(q))}", highlight=False)
        ask(question=q, vault=vault, data_dir=data_dir)
        out.print()
