"""The graph route on real parts: the tree of `graph_tree.py` parsed by the real tree-sitter
grammars and indexed for real as the code source `engine` (hash embedder) beside a vault of
notes naming its symbols; searched through the search service, the CLI's in-process search
and the answer graph's retrieve node. Relational questions about known symbols get the
related units with the reason; anything else is exactly the search it was."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from graph_tree import build
from vault_rag.retrieval.collections import search_collections
from vault_rag.retrieval.graph_route import fuse_route, graph_ask
from vault_rag.retrieval.hybrid import search_options
from vault_rag.services.search import search, searched
from vault_rag.serving.context import open_index
from vault_rag.source_indexes.graph_route import route_for


class _Parts:
    """What the services need (`services.parts.VaultParts`), as the server holds it."""

    def __init__(self, settings) -> None:
        from vault_rag.source_indexes.service import ServedSources
        from vault_rag.vault.exclusions import Exclusions

        self.settings = settings
        self.index = open_index(settings)
        self.exclusions = Exclusions.load(settings, settings.resolved_data_dir())
        self.prior = None
        self.sources = ServedSources(settings, self.index)

    def close(self) -> None:
        self.sources.close()
        self.index.close()


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory):
    settings, _vault, _repo = build(tmp_path_factory.mktemp("graph-route"))
    served = _Parts(settings)
    yield served
    served.close()


def _graph_hits(results) -> dict[tuple[str, str, str | None], str]:
    return {
        (r.collection, r.note_path, r.symbol): r.graph_reason for r in results if r.graph_reason
    }


def _plain(parts: _Parts, query: str, collections: list[str] | None = None) -> list[dict]:
    """The search without the route (as before it existed)."""
    options = search_options(parts.settings, k=parts.settings.top_k)
    found = search_collections(searched(parts, collections), query, options)
    return [r.to_dict() for r in found]


@pytest.mark.parametrize(
    ("question", "relation", "name"),
    [
        ("What derives from `eng::Base`?", "derived", "eng::Base"),
        ("subclasses of Comparator", "derived", "Comparator"),
        ("Comparator 的子类有哪些", "derived", "Comparator"),
        ("what does Pawn derive from", "bases", "Pawn"),
        ("Who calls DBImpl::Get?", "callers", "DBImpl::Get"),
        ("谁调用了DBImpl::Get", "callers", "DBImpl::Get"),
        ("what does Actor::Spawn call", "callees", "Actor::Spawn"),
        ("which files include db/db_impl.h", "included_by", "db/db_impl.h"),
        ("Where is EncodeFixed32 called from?", "callers", "EncodeFixed32"),
        ("Which project headers does db/db_impl.cc include?", "includes", "db/db_impl.cc"),
        ("What does DBImpl inherit from?", "bases", "DBImpl"),
        ("which notes talk about `Actor::Spawn`", "notes", "Actor::Spawn"),
    ],
)
def test_relational_questions_are_recognised(question: str, relation: str, name: str) -> None:
    ask = graph_ask(question)
    assert ask is not None and ask.relation == relation and ask.names[0] == name


def test_other_questions_are_not_relational() -> None:
    assert graph_ask("How does ticking work?") is None
    assert graph_ask("what is a frame of the world") is None
    assert graph_ask("which files include it") is None  # no file named


def test_no_route_hit_leaves_the_list_alone() -> None:
    searched_list: list = []
    assert fuse_route(searched_list, [], 5, 30) is searched_list


def test_what_derives_from_gets_the_subclasses_with_the_reason(parts) -> None:
    results = search(parts, "what derives from eng::Base", k=8).results
    hits = _graph_hits(results)
    assert (
        hits[("engine", "src/core.h", "eng::Actor")]
        == "graph: INHERITS eng::Base (confidence 0.80)"
    )
    assert {path for _, path, _ in hits} >= {"src/core.h", "src/export.h"}
    assert all(reason.startswith("graph: INHERITS eng::Base") for reason in hits.values())
    # the units holding Actor (core.h 12-17), Widget (export.h 3-6) and MakeLocal's Local
    units = {(r.note_path, r.line_start, r.line_end) for r in results if r.graph_reason}
    assert units == {("src/core.h", 12, 17), ("src/export.h", 3, 6), ("src/export.h", 8, 10)}
    assert results[0].graph_reason  # a graph hit leads


def test_who_calls_gets_the_callers_with_the_reason(parts) -> None:
    results = search(parts, "who calls Actor::Spawn", k=8).results
    hits = _graph_hits(results)
    assert hits[("engine", "src/core.h", "eng::Pawn::Possess")].startswith(
        "graph: CALLS eng::Actor::Spawn (confidence"
    )
    assert ("src/core.h", "eng::Pawn::Possess") in [(r.note_path, r.symbol) for r in results[:5]]


def test_recursion_and_call_cycles_do_not_loop(parts) -> None:
    recurse = _graph_hits(search(parts, "who calls Recurse", k=8).results)
    assert {symbol for _, _, symbol in recurse} >= {"eng::Recurse", "eng::Actor::Tick"}
    ping = _graph_hits(search(parts, "who calls PingA", k=8).results)
    assert {symbol for _, _, symbol in ping} == {"eng::PingB"}


def test_notes_naming_a_symbol(parts) -> None:
    hits = _graph_hits(search(parts, "which notes talk about `eng::Actor::Spawn`", k=8).results)
    notes = {path for collection, path, _ in hits if collection == "vault"}
    assert notes == {"Engine/Actors.md"}  # never Private/Plans.md: an excluded folder


@pytest.mark.parametrize(
    "question",
    ["How does ticking work?", "who calls Frobnicator", "what derives from the world"],
)
def test_other_questions_are_unchanged(parts, question: str) -> None:
    assert route_for(parts.settings, parts.index.data_dir, searched(parts, None)) is not None
    # (the note ↔ code links a code source's search adds are tests/test_pair_links.py's)
    routed = [
        {key: value for key, value in r.to_dict().items() if key != "linked"}
        for r in search(parts, question).results
    ]
    assert routed == _plain(parts, question)
    assert all("graph_reason" not in r for r in routed)


def test_vault_only_search_is_unchanged(parts) -> None:
    vault = searched(parts, ["vault"])
    assert route_for(parts.settings, parts.index.data_dir, vault) is None
    question = "who calls Actor::Spawn"
    assert [r.to_dict() for r in search(parts, question, collections=["vault"]).results] == (
        _plain(parts, question, ["vault"])
    )


def test_the_answer_graph_traces_the_route(parts, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_rag.graph.config import Resources
    from vault_rag.graph.nodes import retrieve
    from vault_rag.graph.run import run_config

    traced: list[dict[str, Any]] = []
    monkeypatch.setattr(retrieve, "progress", lambda node, **data: traced.append(data))
    resources = replace(
        Resources.from_settings(parts.settings, parts.index),
        sources=parts.sources,
        prior=None,
    )
    config = run_config(resources, resources.defaults, None)
    task = {"aspect": 0, "query": "what derives from eng::Base"}
    docs = asyncio.run(retrieve.retrieve_vault(task, config))["documents"]
    assert ("engine", "src/core.h") in {(d["collection"], d["note_path"]) for d in docs}
    (event,) = traced
    assert "src/core.h: graph: INHERITS eng::Base (confidence 0.80)" in event["graph"]


def test_a_relation_into_an_excluded_file_is_never_served(tmp_path: Path) -> None:
    from vault_rag.settings import SourceSpec
    from vault_rag.source_indexes.specs import save_added

    settings, _vault, repo = build(tmp_path)
    data = settings.resolved_data_dir()
    save_added(data, [SourceSpec(name="engine", path=repo, kind="code", exclude=["export.h"])])
    parts = _Parts(settings)
    try:
        results = search(parts, "what derives from eng::Base", k=8).results
        hits = _graph_hits(results)
        assert ("engine", "src/core.h", "eng::Actor") in hits
        # (the index still holds the file until its next run: only the route is checked here)
        assert "src/export.h" not in {path for _, path, _ in hits}
        callers = _graph_hits(search(parts, "who calls Log", k=20).results)
        assert callers and "src/export.h" not in {path for _, path, _ in callers}
    finally:
        parts.close()


def test_search_explain_prints_why(parts) -> None:
    from rich.console import Console

    from vault_rag.serving.search_client import print_search_results

    results = [r.to_dict() for r in search(parts, "who calls Actor::Spawn", k=8).results]
    console = Console(record=True, width=200)
    print_search_results("q", results, 0.1, explain=True, console=console)
    assert "graph: CALLS eng::Actor::Spawn (confidence" in console.export_text()
    plain = Console(record=True, width=200)
    print_search_results("q", results, 0.1, console=plain)
    assert "graph:" not in plain.export_text()  # only with --explain


def test_which_files_include_a_header(parts) -> None:
    hits = _graph_hits(search(parts, "which files include src/core.h", k=8).results)
    assert {path for _, path, _ in hits} == {"src/core.cpp", "src/export.h"}
    assert set(hits.values()) == {"graph: INCLUDES src/core.h (confidence 1.00)"}
