"""Cross-collection links (issue 43, part 3) on real parts: the tree of `graph_tree.py` parsed
by the real tree-sitter grammars and indexed for real as the code source `engine` (hash
embedder) beside a vault of notes naming its symbols. A note hit links to the code it names,
a code hit to the notes naming it; through the search service, `/v1/search`, the CLI's
output, the MCP tool and the answer graph's retrieve node. A vault-only search is unchanged."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from graph_tree import build
from test_graph_route import _Parts, _plain
from vault_rag.retrieval.graph_route import pair_ask
from vault_rag.services.search import search
from vault_rag.source_indexes.pair_links import MAX_LINKED, worth_linking

QUERY = "Actors spawn world"  # finds Engine/Actors.md and src/core.h's Spawn
# Room for every note the query finds: the code source's dense side is HNSW's approximate
# search over 600 near-identical fan-in callers (hash embedder), which sometimes misses the
# best unit, so the code list ahead of the notes is 4 to 7 long from one process to the next.
K = 20


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory):
    settings, _vault, _repo = build(tmp_path_factory.mktemp("pair-links"))
    served = _Parts(settings)
    yield served
    served.close()


def _hit(results, collection: str, path: str, symbol: str | None = None):
    return next(
        r
        for r in results
        if (r.collection, r.note_path) == (collection, path)
        and (symbol is None or r.symbol == symbol)
    )


def _links(result) -> list[tuple[str, str, str, str | None, str]]:
    return [(u.kind, u.collection, u.note_path, u.symbol, u.reason) for u in result.linked]


def test_a_note_hit_links_to_the_code_it_names(parts) -> None:
    results = search(parts, QUERY, k=K).results
    note = _hit(results, "vault", "Engine/Actors.md")
    links = _links(note)
    # the qualified name first (.9), then the one definition of Recurse (.7), then one of the
    # two Helpers (.25 each): it names four definitions, at most three are linked
    assert links[:2] == [
        ("code", "engine", "src/core.h", "eng::Actor::Spawn", "note names eng::Actor::Spawn"),
        ("code", "engine", "src/core.cpp", "eng::Recurse", "note names Recurse"),
    ]
    assert len(links) == MAX_LINKED == 3
    kind, collection, path, symbol, reason = links[2]
    assert (kind, collection, symbol) == ("code", "engine", "Helper")
    assert path in {"src/util.cpp", "src/other.cpp"}
    assert reason == "note names Helper (one of 2 definitions)"  # ambiguous across files
    spawn = note.linked[0]
    assert (spawn.line_start, spawn.line_end) == (16, 16)  # the unit holding Spawn
    assert "Spawn()" in spawn.text and len(spawn.text) <= 200
    assert all(len(r.linked) <= MAX_LINKED for r in results)


def test_a_code_hit_links_to_the_notes_naming_it(parts) -> None:
    results = search(parts, QUERY, k=K).results
    spawn = _hit(results, "engine", "src/core.h", "eng::Actor::Spawn")
    # never Private/Plans.md, which names it too: an excluded folder of the vault
    assert _links(spawn) == [
        ("note", "vault", "Engine/Actors.md", "eng::Actor::Spawn", "note names eng::Actor::Spawn")
    ]
    assert "eng::Actor::Spawn" in spawn.linked[0].text
    helper = _hit(search(parts, "Spawn Tick Helper", k=K).results, "engine", "src/util.cpp")
    assert _links(helper) == [("note", "vault", "Engine/Actors.md", "Helper", "note names Helper")]


def test_hits_naming_nothing_have_no_links(parts) -> None:
    results = search(parts, QUERY, k=K).results
    assert _hit(results, "vault", "Hub.md").linked == []
    assert "linked" not in _hit(results, "vault", "Hub.md").to_dict()
    assert "linked" in _hit(results, "vault", "Engine/Actors.md").to_dict()


@pytest.mark.parametrize(
    ("name", "worth"),
    [
        ("DBImpl::Write", True),
        ("pybind11::gil_scoped_release", True),
        ("gil_scoped_release", True),
        ("BeginDestroy", True),
        ("Helper", True),
        ("helper", False),  # a word
        ("save", False),
        ("Log", False),  # too short
        ("_x_", False),
    ],
)
def test_only_names_that_mean_a_symbol_link(name: str, worth: bool) -> None:
    assert worth_linking(name) is worth


def test_vault_only_search_has_no_links(parts) -> None:
    found = [r.to_dict() for r in search(parts, QUERY, k=8, collections=["vault"]).results]
    assert found == _plain(parts, QUERY, ["vault"])
    assert found and all("linked" not in r for r in found)
    text = json.dumps(found)
    assert "linked" not in text and "↔" not in text


def test_a_file_the_source_leaves_out_is_never_linked(tmp_path: Path) -> None:
    from vault_rag.settings import SourceSpec
    from vault_rag.source_indexes.specs import save_added

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Widgets.md").write_text(
        "# Widgets\n\n`Widget::Draw` paints a widget; `eng::Actor::Spawn` places it.\n"
        "We `save` it with a `helper` and `Log` it.\n",  # words, defined in py/ and util
        encoding="utf-8",
    )
    settings, _vault, repo = build(tmp_path, vault=vault)
    parts = _Parts(settings)
    try:
        before = _hit(search(parts, "widgets paint", k=8).results, "vault", "Widgets.md")
        # (`save`, `helper` and `Log` are defined in the tree, but are words: never linked)
        assert {u.note_path for u in before.linked} == {"src/export.h", "src/core.h"}
        data = settings.resolved_data_dir()
        save_added(data, [SourceSpec(name="engine", path=repo, kind="code", exclude=["export.h"])])
        results = search(parts, "widgets paint", k=8).results
        after = _hit(results, "vault", "Widgets.md")
        assert [u.note_path for u in after.linked] == ["src/core.h"]
        # (the index still holds export.h until its next run: its hit links to nothing)
        assert all(
            r.linked == []
            for r in results
            if (r.collection, r.note_path) == ("engine", "src/export.h")
        )
    finally:
        parts.close()


def test_a_broken_graph_gives_no_links_and_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from vault_rag.graph_store.sync import graph_path

    settings, _vault, _repo = build(tmp_path)
    parts = _Parts(settings)
    try:
        engine = parts.sources.indexes(["engine"])["engine"]
        assert _hit(search(parts, QUERY, k=K).results, "vault", "Engine/Actors.md").linked
        path = graph_path(engine)
        for stale in path.parent.glob(path.name + "-*"):  # the WAL and its index
            stale.unlink()
        path.write_bytes(b"this is not a database " * 100)
        with caplog.at_level(logging.WARNING, logger="vault_rag.source_indexes.pair_links"):
            results = search(parts, QUERY, k=K).results
        assert results and all(r.linked == [] for r in results)
        assert all("linked" not in r.to_dict() for r in results)
        assert any("no cross-collection links from engine" in m for m in caplog.messages)
    finally:
        parts.close()


def test_the_api_carries_links_and_prints_as_the_local_search(parts) -> None:
    from test_server_helpers import LiveServer, wait_idle, wait_until
    from vault_rag.api import create_app
    from vault_rag.serving.search_client import ordered_hit

    token = "test-token-0123456789"
    with LiveServer(create_app(parts.settings, token=token), token=token) as live:
        wait_idle(live)
        wait_until(lambda: not live.state.sources.scanning, 60)
        with live.client() as client:
            remote = client.post("/v1/search", json={"query": QUERY, "k": K}).json()["results"]
            vault = client.post(
                "/v1/search", json={"query": QUERY, "k": 8, "collections": ["vault"]}
            ).json()["results"]
    local = [r.to_dict() for r in search(parts, QUERY, k=K).results]
    printed = [ordered_hit(hit) for hit in remote]
    assert json.dumps(printed, ensure_ascii=False) == json.dumps(local, ensure_ascii=False)
    assert any("linked" in hit for hit in printed)
    assert all(hit["linked"] == [] for hit in vault)  # the API's model: an empty list
    assert all("linked" not in ordered_hit(hit) for hit in vault)


def test_search_prints_the_pair_lines_only_when_linked(parts) -> None:
    from rich.console import Console

    from vault_rag.serving.search_client import linked_lines, print_search_results

    results = [r.to_dict() for r in search(parts, QUERY, k=K).results]
    console = Console(record=True, width=250)
    print_search_results("q", results, 0.1, console=console)
    text = console.export_text()
    assert "↔ code: src/core.h:16-16 eng::Actor::Spawn" in text
    assert "↔ note: Engine/Actors.md" in text
    unlinked = sum(1 for r in results if "linked" not in r)
    assert unlinked and sum(len(linked_lines(r)) for r in results) == text.count("↔")
    vault = [r.to_dict() for r in search(parts, QUERY, k=8, collections=["vault"]).results]
    plain = Console(record=True, width=250)
    print_search_results("q", vault, 0.1, console=plain)
    assert "↔" not in plain.export_text()


def test_the_mcp_search_carries_links(parts) -> None:
    from vault_rag.mcp_server.limits import Limits
    from vault_rag.mcp_server.local import LocalBackend

    backend = LocalBackend(lambda: parts, lambda: None, Limits.from_settings(parts.settings))

    async def call(**arguments: Any):
        return await backend.call_tool("search_notes", arguments)

    found = anyio.run(lambda: call(query=QUERY, k=K))
    assert not found.is_error
    hits = found.structured_content["results"]
    note = next(h for h in hits if h["note"] == "Engine/Actors.md")
    assert note["linked"][0] == {
        "kind": "code",
        "collection": "engine",
        "note": "src/core.h",
        "symbol": "eng::Actor::Spawn",
        "line_start": 16,
        "line_end": 16,
        "reason": "note names eng::Actor::Spawn",
    }
    assert "↔ code: src/core.h:16-16 eng::Actor::Spawn" in found.content[0].text
    vault = anyio.run(lambda: call(query=QUERY, k=8, collections=["vault"]))
    assert all(h["linked"] == [] for h in vault.structured_content["results"])
    assert "↔" not in vault.content[0].text


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("the note about DBImpl::Write and the code that implements it", "DBImpl::Write"),
        ("Show me my notes on `gil_scoped_release` and its implementation", "gil_scoped_release"),
        ("code and documentation for UObject::BeginDestroy", "UObject::BeginDestroy"),
        ("DBImpl::Write 的笔记和实现代码", "DBImpl::Write"),
        ("UObject::BeginDestroy 的实现和相关文档", "UObject::BeginDestroy"),
    ],
)
def test_pair_questions_are_recognised(question: str, name: str) -> None:
    names = pair_ask(question)
    assert names is not None and names[0] == name


@pytest.mark.parametrize(
    "question",
    [
        "How does ticking work?",
        "who calls DBImpl::Write",
        "which notes talk about Spawn",
        "这段代码做什么",
    ],
)
def test_other_questions_are_not_pair_questions(question: str) -> None:
    assert pair_ask(question) is None


def test_the_answer_graph_adds_the_pair_and_traces_why(parts, monkeypatch) -> None:
    from vault_rag.graph.config import Resources
    from vault_rag.graph.nodes import retrieve
    from vault_rag.graph.run import run_config
    from vault_rag.graph.sources import citation_of

    traced: list[dict[str, Any]] = []
    monkeypatch.setattr(retrieve, "progress", lambda node, **data: traced.append(data))
    resources = replace(
        Resources.from_settings(parts.settings, parts.index), sources=parts.sources, prior=None
    )
    # 20 places: with hash vectors routing gives this small tree most of the first ten
    config = run_config(resources, replace(resources.defaults, top_k=20), None)

    found: list[dict[str, Any]] = []

    def docs(query: str) -> set[tuple[str, str, int]]:
        found[:] = asyncio.run(retrieve.retrieve_vault({"aspect": 0, "query": query}, config))[
            "documents"
        ]
        return {(d["collection"], d["note_path"], d["line_start"]) for d in found}

    # Actors.md names eng::Actor::Spawn (core.h:16); a search of these words alone finds the
    # note but not that definition's unit
    plain = docs("Ticking runs each frame")
    assert all("linked" not in d and "linked" not in citation_of(d) for d in found)
    assert ("vault", "Engine/Actors.md", 4) in plain
    assert ("engine", "src/core.h", 16) not in plain
    assert "pairs" not in traced[-1]
    paired = docs("the note about Ticking runs each frame and the code that implements it")
    assert {("vault", "Engine/Ticking.md", 1), ("engine", "src/core.cpp", 4)} <= paired
    assert ("engine", "src/core.h", 16) in paired  # the pair: joined with its reason
    pairs = traced[-1]["pairs"]
    assert "src/core.h: pair: note names eng::Actor::Spawn (Engine/Actors.md)" in pairs
    assert all(re.fullmatch(r"\S+: pair: note names .+ \(Engine/\w+\.md\)", p) for p in pairs)
    # the note's citation carries its pair, for the pane
    actors = next(d for d in found if d["note_path"] == "Engine/Actors.md")
    linked = citation_of(actors)["linked"]
    assert linked[0]["kind"] == "code" and linked[0]["note_path"] == "src/core.h"
    assert linked[0]["reason"] == "note names eng::Actor::Spawn"


def test_the_cli_search_prints_links_in_json_only_with_a_code_source(
    parts, capsys, monkeypatch, tmp_path: Path
) -> None:
    from vault_rag.serving.local_search import search_in_process
    from vault_rag.serving.search_client import SearchArgs

    # the settings of `graph_tree.SETTINGS`, as the CLI reads them (no settings file)
    (tmp_path / "settings.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_EXCLUDE", '["Private"]')
    monkeypatch.setenv("VAULT_RAG_MAX_CODE_KB", "2048")

    settings = parts.settings
    args = SearchArgs(QUERY, settings.vault.resolve(), settings.resolved_data_dir(), k=K)
    assert search_in_process(replace(args, as_json=True)) == 0
    found = json.loads(capsys.readouterr().out)["results"]
    note = next(r for r in found if r["note_path"] == "Engine/Actors.md")
    assert note["linked"][0]["note_path"] == "src/core.h"
    assert note["linked"][0]["reason"] == "note names eng::Actor::Spawn"
    assert any("linked" not in r for r in found)  # only where there are links
    vault = replace(args, as_json=True, collections=("vault",))
    assert search_in_process(vault) == 0
    assert "linked" not in capsys.readouterr().out
