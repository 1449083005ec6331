"""`vault-rag eval`: score retrieval on question files (ours, by side, and the naive baseline)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, err, fail, out
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.evaluation.hints import locate_hints
from vault_rag.evaluation.metrics import MEASURES
from vault_rag.evaluation.qa import QAError, load_qa, source_key
from vault_rag.evaluation.report import LABELS, to_markdown
from vault_rag.evaluation.retrieval import SIDES, IndexSystem, System, evaluate, search_options
from vault_rag.evaluation.translated import TranslatedSystem
from vault_rag.index.lock import IndexLockedError
from vault_rag.index.manifest import Manifest
from vault_rag.index.updates.records import IndexSummary
from vault_rag.index.vault_index import MANIFEST_FILE, ModelMismatchError, VaultIndex
from vault_rag.retrieval.calibration import calibration_for
from vault_rag.retrieval.collections import UnknownCollectionError
from vault_rag.retrieval.translate import translator_for
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.settings import Settings, load_settings
from vault_rag.source_indexes.collections import index_sources, open_searched, source_data_dir
from vault_rag.source_indexes.graph_route import route_for
from vault_rag.source_indexes.specs import VAULT, SourceError, all_specs

NAIVE_DIR = "naive"  # under the data dir: the naive pipeline's vector cache


class Baseline(StrEnum):
    naive = "naive"


class Side(StrEnum):
    fused = "fused"
    dense = "dense"
    lexical = "lexical"
    all = "all"


QAFiles = Annotated[
    list[Path],
    typer.Argument(
        help="Question files (JSON Lines: id, question, gold, gold_heading, kind, lang).",
        metavar="QA.jsonl",
        exists=True,
        dir_okay=False,
        resolve_path=True,
    ),
]


@app.command("eval")
def eval_command(
    qa: QAFiles,
    vault: VaultOption,
    data_dir: DataDirOption = None,
    k: Annotated[int, typer.Option("-k", min=1, max=50, help="Depth of every metric.")] = 10,
    side: Annotated[
        list[Side] | None,
        typer.Option(
            "--side", help="Our search's lists to score: fused (default), dense, lexical or all."
        ),
    ] = None,
    baseline: Annotated[
        Baseline | None,
        typer.Option(
            "--baseline", help="Also score the naive LangChain pipeline (dense, BM25, hybrid)."
        ),
    ] = None,
    rerank: Annotated[
        bool,
        typer.Option(
            "--rerank",
            help="Also score the search with the configured re-ranker (`rerank` setting), "
            "as `ours+rerank`.",
        ),
    ] = False,
    collection: Annotated[
        list[str] | None,
        typer.Option(
            "--collection",
            help="Search this collection: `vault` or a source's name (repeat; default: the "
            "default_collections setting, as `search`). Gold in a source is `source:path`.",
        ),
    ] = None,
    translate: Annotated[
        bool,
        typer.Option(
            "--translate",
            help="Also score the search with questions in another script than the vault's "
            "translated by the configured chat model (`llm_model`), as `ours+translate`.",
        ),
    ] = False,
    as_json: JsonOption = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the tables as Markdown (docs/retrieval.md).")
    ] = False,
) -> None:
    """Recall@1/5/10, MRR@10 and nDCG@10 of the vault search on question files, at note and
    heading level, overall and per kind, with the misses. The index is brought up to date
    first; the search is the one `POST /v1/search` runs (feedback prior off)."""
    try:
        load_qa(qa)  # bad lines fail before minutes of indexing
    except QAError as exc:
        fail(str(exc))
    sides = _sides(side or [Side.fused])
    settings = load_settings(vault=vault, data_dir=data_dir)
    if rerank and settings.rerank == "none":
        fail('--rerank needs a re-ranker: set rerank = "http" or "llm" (see the settings)')
    translator = translator_for(settings) if translate else None
    if translate and translator is None:
        fail(
            "--translate needs a chat model: set llm_model (and llm_base_url for a local "
            "server), and translate_queries = true"
        )
    try:
        vault_index = open_index(settings)
    except EmbeddingError as exc:
        fail(str(exc))
        return
    pipeline = None
    searched: dict[str, VaultIndex] = {}
    translated: TranslatedSystem | None = None
    try:
        summary = _update_index(settings, vault_index)
        searched = open_searched(settings, vault_index, collection)
        items = load_qa(qa, notes=_known(settings, vault_index))
        # Only the vault: exactly the vault's own search (no collection machinery at all).
        collections = searched if list(searched) != [VAULT] else None
        hint_lines, unplaced = locate_hints(items, vault_index.vault_root)
        if unplaced:
            err.print(
                f"[yellow]warning[/] answer_hint not found in its gold notes (no line level): "
                f"{', '.join(unplaced)}"
            )
        # The graph route, as `POST /v1/search` runs it (None: no code source searched).
        route = route_for(settings, vault_index.data_dir, collections) if collections else None
        systems: list[System] = [
            IndexSystem(
                vault_index,
                replace(search_options(settings, k * settings.per_note_cap), graph_route=route),
                s,
                "",
                collections,
            )
            for s in sides
        ]
        if rerank:
            options = search_options(settings, k * settings.per_note_cap, rerank=True)
            options = replace(options, graph_route=route)
            systems.append(IndexSystem(vault_index, options, "fused", "ours+rerank", collections))
        if translator is not None:
            translated = TranslatedSystem(
                vault_index,
                search_options(settings, k * settings.per_note_cap),
                translator,
                calibration_for(vault_index.provider.model_id).translation_relevance,
            )
            systems.append(translated)
        if baseline is Baseline.naive:
            from vault_rag.evaluation.naive import NaivePipeline, NaiveSystem

            err.print("naive baseline: splitting and embedding (vectors cached)…")
            pipeline = NaivePipeline(
                vault_index.vault_root,
                vault_index.provider,
                vault_index.data_dir / NAIVE_DIR,
                settings.ignore,
            )
            depth = k * settings.per_note_cap
            systems += [NaiveSystem(pipeline, m, depth) for m in ("dense", "lexical", "hybrid")]
        report = evaluate(items, systems, k, hint_lines=hint_lines)
    except QAError as exc:
        fail(str(exc))
        return
    except (
        IndexLockedError,
        ModelMismatchError,
        EmbeddingError,
        UnknownCollectionError,
        SourceError,
    ) as exc:
        fail(str(exc))
        return
    finally:
        for index in searched.values():
            if index is not vault_index:
                index.close()
        vault_index.close()
        if pipeline is not None:
            pipeline.close()
    report["index"] = {
        "chunks_embedded": summary.chunks_embedded,
        "chunks_pending": summary.chunks_pending,
    }
    report["options"] = {
        "per_note_cap": settings.per_note_cap,
        "rrf_k": settings.rrf_k,
        "chunk_min": settings.chunk_min,
        "chunk_max": settings.chunk_max,
        "model": vault_index.provider.model_id,
        "feedback_prior": False,
        "rerank": settings.rerank if rerank else "none",
        "collections": list(searched) or [VAULT],
        "translate": translator.label if translator is not None else "none",
    }
    if translated is not None:
        report["translation"] = translated.summary()
    if pipeline is not None:
        report["naive"] = {
            "chunks": len(pipeline.chunks),
            "vectors_computed": pipeline.embeddings.computed,
            "vectors_reused": pipeline.embeddings.reused,
        }
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    elif markdown:
        title = f"{vault.name}: {', '.join(f.name for f in qa)}"
        sys.stdout.write(to_markdown(report, title))
    else:
        _print(report)


def _sides(chosen: list[Side]) -> list[str]:
    if Side.all in chosen:
        return list(SIDES)
    return list(dict.fromkeys(s.value for s in chosen))


def _update_index(settings: Settings, vault_index: VaultIndex) -> IndexSummary:
    """Index what changed (the normal incremental indexer), quietly, the vault then each source
    beside it; a summary on stderr."""
    vault_index.check_model()
    summary = make_indexer(settings, vault_index).run()
    err.print(f"index: {vault_index.data_dir}: {summary.line()}", highlight=False, markup=False)
    if summary.chunks_pending:
        err.print(f"[yellow]warning[/] {summary.chunks_pending} chunks have no vector yet")
    if all_specs(settings, settings.resolved_data_dir()):
        for run in index_sources(settings, vault_index.provider):
            line = run.error or ("removed" if run.removed else run.summary and run.summary.line())
            err.print(f"source {run.name}: {line}", highlight=False, markup=False)
    return summary


def _known(settings: Settings, vault_index: VaultIndex) -> list[str]:
    """What gold may name: the vault's notes and the files of every source beside it, searched
    or not (`source:path`), as their indexes hold them."""
    known = list(vault_index.manifest.notes())
    data_dir = settings.resolved_data_dir()
    for spec in all_specs(settings, data_dir):
        file = source_data_dir(data_dir, spec.name) / MANIFEST_FILE
        if file.is_file():
            manifest = Manifest(file)
            try:
                known += [source_key(spec.name, path) for path in manifest.notes()]
            finally:
                manifest.close()
    return known


def _print(report: dict[str, Any]) -> None:
    # Piped output would be cut at 80 columns; the tables need about 100.
    console = out if out.is_terminal else Console(width=max(out.width, 110))
    k = report["k"]
    console.print(
        f"{report['questions']} questions: {report['scored']} scored, "
        f"{report['off_topic']} off-topic (skipped), {report['with_heading']} with gold_heading; "
        f"metrics at depth {k}",
        highlight=False,
    )
    translation = report.get("translation")
    if translation:
        console.print(
            f"ours+translate: vault script {translation['vault_script']}, "
            f"{translation['asked']} of {translation['questions']} questions sent to "
            f"{translation['model']}, {translation['translated']} translated; not: "
            + (", ".join(f"{n} {why}" for why, n in translation["not_translated"].items())),
            highlight=False,
            markup=False,
        )
    systems = report["systems"]
    levels = (
        ("note", "note level"),
        ("heading", "heading level (gold_heading)"),
        ("page", "page level (gold_page: PDFs)"),
        ("symbol", "symbol level (gold_symbol: code)"),
        ("line", "line level (answer_hint)"),
    )
    for level, title in levels:
        scored = {n: s for n, s in systems.items() if s.get(level, {}).get("overall", {}).get("n")}
        if not scored:
            continue
        table = Table(title=title)
        for column in ("scope", "n", "system", *(LABELS[m] for m in MEASURES)):
            table.add_column(column, justify="left" if column in ("scope", "system") else "right")
        first = next(iter(scored.values()))[level]
        scopes = [("overall", first["overall"]), *first["by_kind"].items()]
        for number, (scope, stats) in enumerate(scopes):
            for position, (name, data) in enumerate(scored.items()):
                group = data[level]
                row = group["overall"] if scope == "overall" else group["by_kind"][scope]
                values = [f"{row[m]:.3f}" for m in MEASURES]
                label = scope if position == 0 else ""
                table.add_row(label, str(stats["n"]) if position == 0 else "", name, *values)
            if number < len(scopes) - 1:
                table.add_section()
        console.print(table)
    for name, data in systems.items():
        if data.get("all"):
            found = {key: value for key, value in data["all"].items() if key != "n"}
            cells = ", ".join(f"{key} {value:.3f}" for key, value in found.items())
            console.print(
                f"{name}: every gold item found (gold_all, n = {data['all']['n']}): {cells}",
                highlight=False,
            )
    for name, data in systems.items():
        if name.startswith("naive"):
            continue  # the naive lists' misses are in --json
        misses = data["misses"]
        console.print(
            f"\n[bold]{escape(name)}[/]: {len(misses)} questions without the gold note at rank 1"
        )
        for miss in misses:
            rank = miss["gold_rank"] or f">{k}"
            top = miss["first"]
            first = f"{top['note_path']}#{top['heading_path']}" if top else "(nothing)"
            console.print(
                f"  {miss['id']} [{miss['kind']}] gold rank {rank}: {miss['question']}\n"
                f"      gold {', '.join(miss['gold'])}\n      first {first}",
                highlight=False,
                markup=False,
            )
