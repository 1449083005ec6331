"""The code graph on a real tree (`graph_tree.py`), parsed by the real tree-sitter grammars and
indexed as a real code source: definitions, CONTAINS, CALLS with confidence (cycles,
recursion, a name called 10,000 times, an ambiguous name), INHERITS, INCLUDES/IMPORTS, macros
hiding declarations, a file cut halfway; the graph following the index (a changed file
replaces its rows, a deleted one loses them, nothing else is parsed again) and a graph of an
older version rebuilt, not mixed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from graph_tree import FAN_IN, SPAM_CALLS, build, index_all
from vault_rag.graph_store.code import find_symbol, relations
from vault_rag.graph_store.store import GraphStore
from vault_rag.graph_store.sync import graph_path, open_graph, sync_graph
from vault_rag.serving.context import open_index
from vault_rag.source_indexes.collections import open_source
from vault_rag.source_indexes.specs import all_specs


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    settings, _vault, repo = build(tmp_path_factory.mktemp("graph-code"))
    return settings, repo


def _source(settings):
    spec = next(s for s in all_specs(settings, settings.resolved_data_dir()) if s.name == "engine")
    vault_index = open_index(settings)
    provider = vault_index.provider
    vault_index.close()
    return open_source(settings, spec, spec.path, provider)


@pytest.fixture()
def store(built):
    settings, _ = built
    index = _source(settings)
    graph = open_graph(index)
    yield graph
    graph.close()
    index.close()


def _one(store: GraphStore, name: str):
    rows, total = find_symbol(store, name)
    assert total >= 1, name
    return rows[0]


def _names(found) -> dict[str | None, float]:
    return {r.symbol: r.confidence for r in found.items}


def test_the_index_run_wrote_the_graph(built) -> None:
    settings, _ = built
    index = _source(settings)
    try:
        assert graph_path(index).is_file()  # written by index_sources, not by the first question
        store = GraphStore(graph_path(index))
        counts = store.counts()
        store.close()
    finally:
        index.close()
    assert counts["files"] == 14 and counts["symbols"] > FAN_IN and counts["edges"] > FAN_IN


def test_find_symbol_by_name_and_qualified_name(store) -> None:
    rows, total = find_symbol(store, "Actor::Tick")
    assert total == 1 and (rows[0].path, rows[0].qualified) == ("src/core.cpp", "eng::Actor::Tick")
    rows, total = find_symbol(store, "tick")  # any case; the class method first by path
    assert {r.qualified for r in rows} == {"eng::Base::Tick", "eng::Actor::Tick"}
    rows, total = find_symbol(store, "Helper")  # the exact case wins over Python's `helper`
    assert total == 2 and {r.path for r in rows} == {"src/util.cpp", "src/other.cpp"}
    model = _one(store, "app.models.User")  # (a dotted name: the last parts must match)
    assert model.path == "py/app/models.py" and model.kind == "class"


def test_contains(store) -> None:
    actor = _one(store, "eng::Actor")
    inside = relations(store, actor, "contains")
    # the inline method in the header and the out-of-line definition in the .cpp
    assert {(r.symbol, r.path) for r in inside.items} >= {
        ("eng::Actor::Spawn", "src/core.h"),
        ("eng::Actor::Tick", "src/core.cpp"),
    }
    top = relations(store, None, "contains", path="src/core.h")
    assert [r.symbol for r in top.items] == ["eng::Base", "eng::Actor", "eng::Pawn"]
    up = relations(store, _one(store, "Pawn::Possess"), "contained_by")
    assert [r.symbol for r in up.items] == ["eng::Pawn"]


def test_calls_with_confidence(store) -> None:
    spawn = _one(store, "Actor::Spawn")
    callees = relations(store, spawn, "callees")
    found = _names(callees)
    assert found["eng::Actor::Tick"] >= 0.9  # same class
    assert found["Helper"] == pytest.approx(0.25)  # two definitions, none closer: .5 / 2
    helper_rows = [r for r in callees.items if r.name == "Helper"]
    assert {r.path for r in helper_rows} == {"src/util.cpp", "src/other.cpp"}

    callers = relations(store, spawn, "callers")
    assert [(r.symbol, r.why) for r in callers.items] == [("eng::Pawn::Possess", "base class")]

    tick = _one(store, "Actor::Tick")
    found = _names(relations(store, tick, "callees"))
    assert found["eng::Base::Tick"] == pytest.approx(0.85)  # written qualified: Base::Tick
    assert found["eng::Recurse"] == pytest.approx(0.8)  # same file

    # a call of a name defined nowhere in the source: external, confidence 0
    save = _one(store, "User::save")
    items = relations(store, save, "callees").items
    assert ("app.models.User" not in {r.symbol for r in items}) and any(
        r.symbol == "User::validate" and r.confidence >= 0.9 for r in items
    )


def test_recursion_and_cycles(store) -> None:
    recurse = _one(store, "Recurse")
    assert "eng::Recurse" in _names(relations(store, recurse, "callers"))
    assert "eng::Recurse" in _names(relations(store, recurse, "callees"))
    ping_a, ping_b = _one(store, "PingA"), _one(store, "PingB")
    assert "eng::PingB" in _names(relations(store, ping_a, "callees"))
    assert "eng::PingA" in _names(relations(store, ping_b, "callees"))
    assert "eng::PingB" in _names(relations(store, ping_a, "callers"))
    helper = _one(store, "helper")  # Python recursion
    assert "helper" in _names(relations(store, helper, "callers"))


def test_fan_out_is_bounded(store) -> None:
    log = _one(store, "Log")
    callers = relations(store, log, "callers", limit=50)
    assert len(callers.items) == 50 and callers.total >= FAN_IN + 1
    spam = next(r for r in relations(store, log, "callers", limit=1000).items if r.symbol == "Spam")
    assert spam.count == SPAM_CALLS  # one edge, counted, not 10,000 rows
    capped = relations(store, log, "callers", max_scan=100)
    assert capped.truncated and capped.total <= 100
    spam_def = _one(store, "Spam")
    callees = relations(store, spam_def, "callees").items
    assert [(r.symbol, r.count) for r in callees] == [("Log", SPAM_CALLS)]


def test_inheritance(store) -> None:
    actor, base = _one(store, "eng::Actor"), _one(store, "eng::Base")
    assert _names(relations(store, actor, "bases")) == {"eng::Base": pytest.approx(0.8)}
    derived = relations(store, base, "derived").items
    assert {(r.symbol, r.kind) for r in derived} == {
        ("eng::Actor", "class"),
        ("Widget", "class"),  # `class ENG_EXPORT Widget`: the export macro is no name
        ("MakeLocal::Local", "class"),  # a class inside a function body is no symbol
    }
    assert _one(store, "Widget").kind == "class"
    assert set(_names(relations(store, actor, "derived"))) == {"eng::Pawn"}
    user, model = _one(store, "User"), _one(store, "Model")
    assert set(_names(relations(store, user, "bases"))) == {"Model"}
    assert set(_names(relations(store, model, "derived"))) == {"User"}


def test_includes_and_imports(store) -> None:
    inc = relations(store, None, "includes", path="src/core.cpp")
    assert [(r.path, r.confidence) for r in inc.items] == [("src/core.h", 1.0)]
    header = relations(store, None, "includes", path="src/core.h")
    assert {(r.name, r.kind) for r in header.items} == {("util.h", "file"), ("vector", "external")}
    by = relations(store, None, "included_by", path="src/util.h", limit=100)
    assert {r.path for r in by.items} == {
        "src/core.h",
        "src/util.cpp",
        "src/macro.cpp",
        "src/macro2.cpp",
        "src/cut.cpp",
        "src/spam.cpp",
        "src/fanin.cpp",
    }
    imports = relations(store, None, "includes", path="py/app/models.py")
    assert [r.path for r in imports.items] == ["py/app/base.py"]
    assert [r.path for r in relations(store, None, "included_by", path="py/app/base.py").items] == [
        "py/app/models.py"
    ]


def test_macros_and_a_file_cut_halfway(store) -> None:
    # macro.cpp: a class opened and closed by macros throws the parse; nothing crashes and its
    # calls are kept, held by the file itself
    held = relations(store, _one(store, "Helper"), "callers", limit=500).items
    assert ("src/macro.cpp", "file") in {(r.path, r.kind) for r in held}
    # macro2.cpp: a macro hiding a function's declaration; what follows it is read
    after = [r for r in find_symbol(store, "AfterMacro")[0] if r.path == "src/macro2.cpp"]
    assert {r.name for r in relations(store, after[0], "callees").items} == {"Helper"}
    whole = _one(store, "Whole")
    assert [r.symbol for r in relations(store, whole, "callees").items] == ["Log"]
    language, errors, _ = store.file_info("src/cut.cpp")
    assert language == "cpp" and errors > 0
    log_callers = relations(store, _one(store, "Log"), "callers", limit=1000).items
    assert {"Whole", None} <= {r.symbol for r in log_callers if r.path == "src/cut.cpp"}


def test_the_graph_follows_the_index(tmp_path: Path) -> None:
    settings, _vault, repo = build(tmp_path)
    (repo / "src" / "other.cpp").unlink()
    (repo / "src" / "util.cpp").write_text(
        '#include "util.h"\n\nvoid Log() {}\n\nvoid Helper2() { Log(); }\n', encoding="utf-8"
    )
    index_all(settings)
    index = _source(settings)
    try:
        assert sync_graph(index).parsed == 0  # the index run synced it: nothing left to do
        store = open_graph(index)
        try:
            assert "src/other.cpp" not in store.files()
            # (only Python's `helper` is left, found by any case)
            assert [r.path for r in find_symbol(store, "Helper")[0]] == ["py/app/models.py"]
            assert [r.path for r in find_symbol(store, "Helper2")[0]] == ["src/util.cpp"]
            spawn = _one(store, "Actor::Spawn")  # Helper is now defined nowhere: external
            helper = [r for r in relations(store, spawn, "callees").items if r.name == "Helper"]
            assert [(r.kind, r.confidence) for r in helper] == [("external", 0.0)]
        finally:
            store.close()

        # a graph of another version is emptied and rebuilt on open, not mixed
        with sqlite3.connect(graph_path(index)) as conn:
            conn.execute("UPDATE meta SET value = '0/0' WHERE key = 'version'")
            conn.execute(
                "INSERT INTO symbols VALUES "
                "('gone.cpp', 'Stale', 'Stale', '', '', 'function', 1, 1)"
            )
        store = open_graph(index)
        try:
            assert find_symbol(store, "Stale")[1] == 0
            assert store.counts()["files"] == 13
            assert store.get_meta("version") != "0/0"
        finally:
            store.close()
    finally:
        index.close()


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


def test_what_the_rules_now_leave_out_is_never_served(tmp_path: Path) -> None:
    """A code file the source's rules exclude after it was indexed, and notes of a folder
    excluded after they were indexed, are not served before the next index run drops them."""
    from vault_rag.services.code_graph import find_symbols, note_links, symbol_relations
    from vault_rag.services.errors import ServiceError
    from vault_rag.settings import SourceSpec
    from vault_rag.source_indexes.specs import save_added

    settings, _vault, repo = build(tmp_path)
    parts = _Parts(settings)
    try:
        found, _ = find_symbols(parts, "Helper")
        assert {d.path for d in found} == {"src/util.cpp", "src/other.cpp"}
        assert len(note_links(parts, "Hub.md").out) == 2
        assert symbol_relations(parts, "notes", symbol="Actor::Spawn").items
        with pytest.raises(ServiceError, match="needs a symbol"):
            symbol_relations(parts, "callers", path="src/util.cpp")
    finally:
        parts.close()

    data = settings.resolved_data_dir()
    save_added(data, [SourceSpec(name="engine", path=repo, kind="code", exclude=["other.cpp"])])
    narrowed = settings.model_copy(update={"exclude": ["Private", "Engine"]})
    parts = _Parts(narrowed)
    try:
        found, _ = find_symbols(parts, "Helper")
        assert {d.path for d in found} == {"src/util.cpp"}
        callees = symbol_relations(parts, "callees", symbol="Actor::Spawn")
        assert "src/other.cpp" not in {r.path for _, r in callees.items}
        helper = [r for _, r in callees.items if r.name == "Helper"]
        assert [r.path for r in helper] == ["src/util.cpp"]
        assert note_links(parts, "Hub.md").out == []  # both targets are under Engine/ now
        assert symbol_relations(parts, "notes", symbol="Actor::Spawn").items == []
        with pytest.raises(ServiceError, match="excluded"):
            note_links(parts, "Engine/Actors.md")
    finally:
        parts.close()


def test_a_damaged_graph_is_set_aside_and_built_again(tmp_path: Path) -> None:
    settings, _vault, repo = build(tmp_path)
    folder = settings.resolved_data_dir() / "sources" / "engine"
    graph = folder / "graph.sqlite3"
    graph.write_bytes(b"this is no database" * 100)
    (repo / "src" / "new.cpp").write_text("void Fresh() { Log(); }\n", encoding="utf-8")
    index_all(settings)  # the source opens (doctor sets the file aside), indexes, syncs
    assert any(p.name.startswith("graph.sqlite3.damaged-") for p in folder.iterdir())
    store = GraphStore(graph)
    try:
        assert store.counts()["files"] == 15
        assert find_symbol(store, "Fresh")[1] == 1
    finally:
        store.close()
