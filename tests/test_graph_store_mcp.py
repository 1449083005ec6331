"""The graph's MCP tools in real client sessions: `vault-rag mcp` over stdio (a real
subprocess, the MCP SDK's client) on a vault of linked notes that name code symbols, with the
real C/C++ and Python tree of `graph_tree.py` beside it as a code source (indexed for real
with the hash embedder, its graph written by the index run). Also the note graph (links,
embeds, canvas edges, tags, backlinks, shared links) and the links between notes and code,
both ways; nothing in the excluded folder `Private/` is ever served."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from graph_tree import FAN_IN, SPAM_CALLS, build
from mcp_helpers import call, error

VAULT_RAG = Path(sys.executable).with_name("vault-rag")
ENV = {
    "VAULT_RAG_EMBEDDINGS": "hash",
    "VAULT_RAG_EXCLUDE": '["Private"]',
    "VAULT_RAG_LLM_MODEL": "",
    "VAULT_RAG_MAX_CODE_KB": "2048",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> StdioServerParameters:
    settings, vault, _ = build(tmp_path_factory.mktemp("graph-mcp"))
    env = {**os.environ, **ENV}
    env.pop("VAULT_RAG_VAULT", None)
    args = ["mcp", "--vault", str(vault), "--data-dir", str(settings.data_dir)]
    return StdioServerParameters(command=str(VAULT_RAG), args=args, env=env)


def _run(served: StdioServerParameters, body) -> None:
    async def session() -> None:
        async with Client(served, mode="auto") as client:
            await body(client)

    anyio.run(session)


def test_find_symbol_and_relations_over_mcp(served) -> None:
    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("find_symbol", "symbol_relations", "note_links"):
            assert tools[name].output_schema is not None and tools[name].annotations.read_only_hint

        found = await call(client, "find_symbol", name="Actor::Tick")
        assert found["total"] == 1
        (tick,) = found["definitions"]
        assert (tick["collection"], tick["path"], tick["symbol"], tick["kind"]) == (
            "engine",
            "src/core.cpp",
            "eng::Actor::Tick",
            "function",
        )
        assert (
            tick["cite"]
            == f"src/core.cpp:{tick['line_start']}-{tick['line_end']} (eng::Actor::Tick)"
        )

        callees = await call(client, "symbol_relations", relation="callees", symbol="Actor::Spawn")
        by_symbol = {r["symbol"]: r for r in callees["relations"]}
        assert by_symbol["eng::Actor::Tick"]["confidence"] >= 0.9
        assert by_symbol["eng::Actor::Tick"]["cite"].startswith("src/core.cpp:")
        helpers = [r for r in callees["relations"] if r["name"] == "Helper"]
        assert len(helpers) == 2 and all(r["confidence"] < 0.5 for r in helpers)
        assert all("ambiguous" in r["why"] for r in helpers)

        callers = await call(client, "symbol_relations", relation="callers", symbol="Log", limit=20)
        assert len(callers["relations"]) == 20 and callers["total"] > FAN_IN
        spam = await call(client, "symbol_relations", relation="callees", symbol="Spam")
        assert [(r["symbol"], r["count"]) for r in spam["relations"]] == [("Log", SPAM_CALLS)]

        derived = await call(client, "symbol_relations", relation="derived", symbol="eng::Base")
        assert {r["symbol"] for r in derived["relations"]} == {
            "eng::Actor",
            "Widget",
            "MakeLocal::Local",
        }
        bases = await call(client, "symbol_relations", relation="bases", symbol="User")
        assert [r["path"] for r in bases["relations"]] == ["py/app/base.py"]
        includes = await call(client, "symbol_relations", relation="includes", path="src/core.cpp")
        assert [r["cite"] for r in includes["relations"]] == ["src/core.h"]
        by = await call(client, "symbol_relations", relation="included_by", path="src/core.h")
        assert [r["path"] for r in by["relations"]] == ["src/core.cpp", "src/export.h"]

        # two definitions of one name: the first answers, the other is named; path chooses
        helper = await call(client, "symbol_relations", relation="callers", symbol="Helper")
        assert helper["subject"]["symbol"] == "Helper" and len(helper["other_definitions"]) == 1
        chosen = await call(
            client, "symbol_relations", relation="callers", symbol="Helper", path="src/other.cpp"
        )
        assert chosen["subject"]["path"] == "src/other.cpp"

        assert "unknown_symbol" in await error(
            client, "symbol_relations", relation="callers", symbol="NoSuchThing"
        )
        assert "unknown_file" in await error(
            client, "symbol_relations", relation="includes", path="src/none.cpp"
        )
        assert "limit" in await error(
            client, "symbol_relations", relation="callers", symbol="Log", limit=5000
        )

    _run(served, body)


def test_note_links_and_links_to_code_over_mcp(served) -> None:
    async def body(client: Client) -> None:
        actors = await call(client, "note_links", path="Engine/Actors.md")
        out = {(o["note"], o["kind"]) for o in actors["out"]}
        assert out == {("Engine/Ticking.md", "link"), ("Glossary.md", "embed")}
        back = {b["note"] for b in actors["back"]}
        assert back == {"Engine/Ticking.md", "Hub.md", "Hub2.md"}  # never Private/Plans.md
        assert set(actors["tags"]) == {"engine", "actors"}
        named = {(s["name"], s["definition"]["symbol"]) for s in actors["symbols"]}
        assert ("eng::Actor::Spawn", "eng::Actor::Spawn") in named
        assert ("Recurse", "eng::Recurse") in named
        spawn = next(s for s in actors["symbols"] if s["name"] == "eng::Actor::Spawn")
        assert spawn["confidence"] == 0.9 and spawn["definition"]["path"] == "src/core.h"
        helper = [s for s in actors["symbols"] if s["name"] == "Helper"]
        assert len(helper) == 2 and all(s["confidence"] == 0.25 for s in helper)

        ticking = await call(client, "note_links", path="Engine/Ticking.md")
        assert ("Board.canvas", "canvas") in {(b["note"], b["kind"]) for b in ticking["back"]}

        shared = await call(client, "note_links", path="Hub.md", other="Hub2.md")
        assert shared["shared_out"] == ["Engine/Actors.md", "Engine/Ticking.md"]
        assert shared["links_between"] == ["Hub2.md → Hub.md"]
        pair = await call(client, "note_links", path="Engine/Actors.md", other="Engine/Ticking.md")
        assert pair["shared_back"] == ["Hub.md", "Hub2.md"]

        # the other way: the notes naming a symbol (the excluded note names it too: not served)
        notes = await call(client, "symbol_relations", relation="notes", symbol="Actor::Spawn")
        assert [(r["path"], r["cite"]) for r in notes["relations"]] == [
            ("Engine/Actors.md", "[[Engine/Actors]]")
        ]
        tick = await call(client, "symbol_relations", relation="notes", symbol="eng::Actor::Tick")
        assert [r["path"] for r in tick["relations"]] == ["Engine/Ticking.md"]

        assert "excluded" in await error(client, "note_links", path="Private/Plans.md")
        assert "Private" not in str(await call(client, "note_links", path="Engine/Actors.md"))

    _run(served, body)
