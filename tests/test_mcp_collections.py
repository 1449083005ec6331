"""MCP `search_notes` and `ask_vault` take `collections` as `/v1/search` does: `vault-rag mcp`
over stdio (a real subprocess session, the MCP SDK's client) on the sample vault plus a code
source beside it (a real `git init` checkout, indexed for real with the hash embedder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_helpers import SETTINGS, SETTINGS_ENV, build_vault, call, error
from vault_rag.serving.context import open_index
from vault_rag.settings import Settings, SourceSpec
from vault_rag.source_indexes.collections import index_sources
from vault_rag.source_indexes.specs import save_added

VAULT_RAG = Path(sys.executable).with_name("vault-rag")
SPAWNER = """\
#pragma once

/** Spawns the zeppelin fleet in formation waves. */
class AZeppelinSpawner
{
public:
    /** Starts the next zeppelin wave. */
    void LaunchZeppelinWave(int WaveIndex)
    {
        CurrentWave = WaveIndex;
        SpawnFormation(CurrentWave);
    }
    int CurrentWave = 0;
};
"""

OTHERS = {
    "Inventory": "Input * 2",
    "Health": "Input - 10",
    "Camera": "Input + 45",
    "Weather": "Input % 7",
    "Audio": "Input << 1",
    "Physics": "Input / 3",
    "Dialogue": "Input + 1",
    "Pathing": "Input ^ 5",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> StdioServerParameters:
    root = tmp_path_factory.mktemp("mcp-collections")
    vault, data = build_vault(root)
    repo = root / "repo"
    (repo / "Source").mkdir(parents=True)
    (repo / "Source" / "ZeppelinSpawner.h").write_text(SPAWNER, encoding="utf-8")
    for name, body in OTHERS.items():  # (a tree of one file gives its words no weight)
        (repo / "Source" / f"{name}.cpp").write_text(
            f"// {name} helpers.\nint {name}Value(int Input)\n{{\n    return {body};\n}}\n",
            encoding="utf-8",
        )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    save_added(data, [SourceSpec(name="game", path=repo, kind="code")])
    settings = Settings(vault=vault, data_dir=data, **SETTINGS)
    index = open_index(settings)
    try:
        runs = index_sources(settings, index.provider)
    finally:
        index.close()
    assert [(r.name, r.error) for r in runs] == [("game", None)]
    env = {**os.environ, **SETTINGS_ENV}
    env.pop("VAULT_RAG_VAULT", None)
    args = ["mcp", "--vault", str(vault), "--data-dir", str(data)]
    return StdioServerParameters(command=str(VAULT_RAG), args=args, env=env)


def test_search_and_ask_take_collections(served) -> None:
    async def session() -> None:
        async with Client(served, mode="auto") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("search_notes", "ask_vault"):
                schema = tools[name].input_schema["properties"]["collections"]
                assert "vault" in schema["description"], name

            query = "zeppelin wave"
            code = await call(client, "search_notes", query=query, collections=["game"])
            assert code["results"], code
            assert {r["collection"] for r in code["results"]} == {"game"}
            top = code["results"][0]
            assert top["kind"] == "code" and top["symbol"] == "AZeppelinSpawner::LaunchZeppelinWave"
            assert top["link"] == (
                f"Source/ZeppelinSpawner.h:{top['line_start']}-{top['line_end']} "
                "(AZeppelinSpawner::LaunchZeppelinWave)"
            )
            notes = await call(client, "search_notes", query=query, collections=["vault"])
            assert {r["collection"] for r in notes["results"]} <= {"vault"}
            both = await call(client, "search_notes", query=query, k=20)
            assert {r["collection"] for r in both["results"]} == {"vault", "game"}
            # the routing decision of a search over both (issue 43): the identifier is the tree's
            assert "routing" not in code or code["routing"] is None  # one collection: none
            named = await call(client, "search_notes", query="where is LaunchZeppelinWave")
            shares = {c["name"]: c for c in named["routing"]}
            assert list(shares) == ["vault", "game"]
            assert shares["vault"]["weight"] == 1
            assert shares["game"]["weight"] > 1, shares
            assert "identifier LaunchZeppelinWave" in shares["game"]["reasons"]
            assert named["results"][0]["symbol"] == "AZeppelinSpawner::LaunchZeppelinWave"

            # ask_vault searches the collections named: the code only, or the notes only.
            # (The evidence bars are the vault's, so this small tree may read as weak: the
            # answer then names its closest files instead of quoting them.)
            question = "What does LaunchZeppelinWave do to start the next zeppelin wave?"
            game = await call(client, "ask_vault", question=question, collections=["game"])
            cited = game["answer"] + " ".join(c["cite"] for c in game["citations"])
            assert "Source/ZeppelinSpawner.h" in cited, game
            vault_only = await call(client, "ask_vault", question=question, collections=["vault"])
            cited = vault_only["answer"] + " ".join(c["cite"] for c in vault_only["citations"])
            assert "Source/" not in cited, vault_only

            assert "no-such" in await error(
                client, "search_notes", query=query, collections=["no-such"]
            )
            assert "no-such" in await error(
                client, "ask_vault", question="zeppelins?", collections=["no-such"]
            )

    anyio.run(session)
