"""Searching the vault and a code source together or apart: the CLI, `POST /v1/search` and
`POST /v1/ask` (extractive: no model) on a real git checkout made here, real Chroma and BM25,
a real uvicorn server (hash embedder)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from test_server_helpers import LiveServer, read_sse, wait_idle, wait_until
from vault_rag.api import create_app
from vault_rag.cli import app
from vault_rag.settings import Settings

TOKEN = "test-token-0123456789"
runner = CliRunner()

SPAWNER_CPP = """\
#include "WaveSpawner.h"

// Spawns every enemy of the wave at the spawn points, one per tick.
void AWaveSpawner::SpawnWaveEnemies(int32 WaveIndex)
{
    for (const FVector& Point : SpawnPoints)
    {
        GetWorld()->SpawnActor<AEnemy>(EnemyClass, Point, FRotator::ZeroRotator);
    }
    CurrentWave = WaveIndex;
}

float AWaveSpawner::DifficultyScale(int32 WaveIndex) const
{
    return 1.0f + 0.25f * WaveIndex;
}
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_SERVER_WATCH", "false")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(6):
        (vault / f"Note {i}.md").write_text(
            f"# Note {i}\n\nThe enemy wave design: spawn enemies in waves, wave {i}.\n",
            encoding="utf-8",
        )
    repo = tmp_path / "game"
    (repo / "Source").mkdir(parents=True)
    (repo / "Source" / "WaveSpawner.cpp").write_text(SPAWNER_CPP, encoding="utf-8")
    for i in range(20):  # a code tree much bigger than the vault
        (repo / "Source" / f"Enemy{i}.py").write_text(
            f"def spawn_enemy_{i}(wave):\n    '''Spawn enemy {i} in the wave.'''\n"
            f"    return wave + {i}\n",
            encoding="utf-8",
        )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    data = tmp_path / "data"
    where = ["--vault", str(vault), "--data-dir", str(data)]
    assert runner.invoke(app, ["sources", "add", "game", str(repo), *where]).exit_code == 0
    result = runner.invoke(app, ["index", *where])
    assert result.exit_code == 0, result.output
    return {"vault": vault, "data": data, "repo": repo}


def _search(env, *args: str) -> dict:
    where = ["--vault", str(env["vault"]), "--data-dir", str(env["data"]), "--json"]
    result = runner.invoke(app, ["search", *args, *where, "--in-process"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_searches_every_collection_fairly_or_one_alone(env):
    both = _search(env, "spawn enemies wave", "-k", "10")["results"]
    collections = [hit["collection"] for hit in both]
    # a code tree of 21 files does not drown 6 notes: rank by rank, the vault's first
    assert collections[:4] == ["vault", "game", "vault", "game"]
    assert collections.count("vault") == 5 and collections.count("game") == 5
    code = _search(env, "SpawnWaveEnemies", "--collection", "game")["results"]
    assert {hit["collection"] for hit in code} == {"game"}
    top = code[0]
    assert top["symbol"] == "AWaveSpawner::SpawnWaveEnemies"
    assert (top["note_path"], top["line_start"], top["line_end"]) == (
        "Source/WaveSpawner.cpp",
        3,
        11,
    )
    notes = _search(env, "spawn enemies wave", "--collection", "vault")["results"]
    assert {hit["collection"] for hit in notes} == {"vault"}


def test_cli_unknown_collection_is_a_clear_error(env):
    where = ["--vault", str(env["vault"]), "--data-dir", str(env["data"])]
    result = runner.invoke(app, ["search", "x", "--collection", "nope", *where, "--in-process"])
    assert result.exit_code == 1
    assert "no collection named 'nope'" in " ".join(result.output.split())


def test_vault_alone_by_default_when_the_setting_says_so(env, monkeypatch):
    monkeypatch.setenv("VAULT_RAG_DEFAULT_COLLECTIONS", "vault")
    hits = _search(env, "spawn enemies wave")["results"]
    assert hits and {hit["collection"] for hit in hits} == {"vault"}


def test_api_search_and_ask_by_collection(env):
    settings = Settings(vault=env["vault"], data_dir=env["data"])
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
        wait_idle(live)
        wait_until(lambda: not live.state.sources.scanning, 60)
        with live.client() as client:
            code = client.post(
                "/v1/search", json={"query": "DifficultyScale", "collections": ["game"]}
            )
            assert code.status_code == 200, code.text
            top = code.json()["results"][0]
            assert (top["collection"], top["symbol"]) == ("game", "AWaveSpawner::DifficultyScale")
            every = client.post("/v1/search", json={"query": "spawn enemies wave"}).json()
            assert {hit["collection"] for hit in every["results"]} == {"vault", "game"}
            bad = client.post("/v1/search", json={"query": "x", "collections": ["nope"]})
            assert bad.status_code == 422 and "nope" in bad.text
        events = []
        body = {"question": "SpawnWaveEnemies spawn points", "collections": ["game"]}
        with (
            httpx.Client(timeout=60) as client,
            client.stream("POST", f"{live.url}/v1/ask", json=body, headers=live.auth) as answer,
        ):
            assert answer.status_code == 200
            events = [(e.event, json.loads(e.data)) for e in read_sse(answer.iter_lines())]
    final = events[-1][1]
    assert events[-1][0] == "final", events[-1]
    assert final["citations"], json.dumps(events, indent=1)[:3000]
    cited = final["citations"][0]
    assert cited["collection"] == "game"
    assert cited["cite"] == "Source/WaveSpawner.cpp:3-11 (AWaveSpawner::SpawnWaveEnemies)"
    # the extractive answer quotes the whole function, not a fragment of it
    function = SPAWNER_CPP.splitlines()[2:11]  # its comment to its closing brace
    quoted = "```cpp\n" + "\n".join(function) + "\n```"  # verbatim, in a code block
    assert quoted in final["answer"], final["answer"]
