"""One home for defaults: every way in to search ranks alike, and `vault-rag chunks` cuts notes
exactly as the index does. The settings come from the environment (as a user sets them), with
non-default retrieval values, a small embedding token cap and a feedback vote, so a path that
built its options its own way would show up here. Embeddings: the wire-level fake server."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from test_server_helpers import LiveServer, wait_idle
from vault_rag.api import create_app
from vault_rag.cli import app as cli_app
from vault_rag.feedback.answers import record_answer
from vault_rag.feedback.store import submit_feedback
from vault_rag.graph.nodes.retrieve import retrieve_vault
from vault_rag.graph.run import run_config
from vault_rag.settings import Settings

from fakes.openai_server import FakeOpenAIServer

TOKEN = "test-token-0123456789"
QUERY = "Actor BeginPlay Tick 生命周期"
NOTE = "Gameplay/Actor 生命周期.md"
runner = CliRunner()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    vault = tmp_path / "vault"
    shutil.copytree(Path(__file__).parent.parent / "sidecar/vault_rag/sample_vault", vault)
    with FakeOpenAIServer() as fake:
        values = {
            "EMBEDDINGS": "openai",
            "EMBEDDINGS_MODEL": "fake-embedding",
            "EMBEDDINGS_BASE_URL": fake.base_url,
            "EMBEDDINGS_API_KEY": "k",
            "EMBEDDINGS_MAX_TOKENS": "120",  # a cap that really cuts chunks
            "TOP_K": "7",
            "PER_NOTE_CAP": "1",
            "RRF_K": "30",
            "FEEDBACK_PRIOR": "true",
            "SERVER_WATCH": "false",
            # With one passage per note, citing the best section (retrieval/cite.py) may show
            # another unit of the voted note; this test follows the voted unit itself.
            "CITE_SPANS": "false",
        }
        monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
        (tmp_path / "none.toml").write_text("", encoding="utf-8")
        for name, value in values.items():
            monkeypatch.setenv(f"VAULT_RAG_{name}", value)
        yield {"vault": vault, "data": tmp_path / "data"}


def ranking(rows: list[dict[str, Any]]) -> list[tuple[str, float]]:
    return [(row["chunk_id"], round(row["score"], 9)) for row in rows]


def test_api_cli_and_graph_rank_alike_with_the_feedback_prior(env):
    vault, data = env["vault"], env["data"]
    settings = Settings(vault=vault, data_dir=data)
    assert (settings.top_k, settings.per_note_cap, settings.rrf_k) == (7, 1, 30)
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
        wait_idle(live)
        with live.client() as client:
            first = client.post("/v1/search", json={"query": QUERY}).json()["results"]
            # Down-vote the top result three times: its prior becomes 1 - 0.1 on every path.
            voted = first[0]["chunk_id"]
            for i in range(3):
                record_answer(
                    data,
                    answer_id=f"a{i}",
                    question=QUERY,
                    answer="a",
                    citations=[
                        {"kind": "vault", "note_path": first[0]["note_path"], "chunk_id": voted}
                    ],
                )
                submit_feedback(data, f"a{i}", "down")
            api = client.post("/v1/search", json={"query": QUERY}).json()["results"]
        resources = live.state.resources
        config = run_config(resources, resources.defaults, None)
        graph = asyncio.run(retrieve_vault({"aspect": 0, "query": QUERY}, config))["documents"]

    cli = runner.invoke(
        cli_app, ["search", QUERY, "--vault", str(vault), "--data-dir", str(data), "--json"]
    )
    assert cli.exit_code == 0, cli.output
    cli_rows = json.loads(cli.stdout)["results"]

    assert len(api) == 7 and len({row["note_path"] for row in api}) == 7  # top_k, per_note_cap
    hit = next(row for row in api if row["chunk_id"] == voted)
    assert hit["prior"] == pytest.approx(0.9) and hit["score"] < hit["base_score"]
    assert ranking(cli_rows) == ranking(api)
    assert [(d["chunk_id"], round(d["score"], 9)) for d in graph] == ranking(api)


def test_cli_chunks_match_the_index(env):
    vault, data = env["vault"], env["data"]
    where = ["--vault", str(vault), "--data-dir", str(data)]
    indexed = runner.invoke(cli_app, ["index", *where])
    assert indexed.exit_code == 0, indexed.output
    shown = runner.invoke(cli_app, ["chunks", NOTE, "--vault", str(vault), "--json"])
    assert shown.exit_code == 0, shown.output
    chunks = [(c["id"], c["content_hash"]) for c in json.loads(shown.stdout)["chunks"]]

    from vault_rag.serving.context import open_index

    index = open_index(Settings(vault=vault, data_dir=data))
    try:
        stored = [(c.id, c.content_hash) for c in index.manifest.note_chunks(NOTE)]
        capped = index.provider.max_tokens
    finally:
        index.close()
    assert capped == 120
    assert chunks == stored
    # The cap matters for this note: the defaults alone would cut it differently.
    plain = runner.invoke(
        cli_app,
        ["chunks", NOTE, "--vault", str(vault), "--json"],
        env={"VAULT_RAG_EMBEDDINGS_MAX_TOKENS": "8191"},
    )
    assert plain.exit_code == 0, plain.output
    assert [(c["id"], c["content_hash"]) for c in json.loads(plain.stdout)["chunks"]] != chunks
