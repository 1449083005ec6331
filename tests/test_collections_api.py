"""`GET /v1/collections` (the pane's collection picker) and the code hits' `.h`/`.cpp` pairing
in `POST /v1/search` and in `/v1/ask`'s citations, on a real git checkout made here (a header
and its source file, a build folder the rules skip), real Chroma and BM25 and a real uvicorn
server (hash embedder)."""

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

HEADER = """\
#pragma once

class ATurret
{
public:
    // Aims the barrel at the nearest target within range.
    void AimAtTarget(float Range);
};
"""

SOURCE = """\
#include "Turret.h"

// Turns the turret barrel towards the nearest target in range, every tick.
void ATurret::AimAtTarget(float Range)
{
    const FRotator Aim = FindNearestTarget(Range);
    Barrel->SetRotation(Aim);
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
    for i in range(3):
        (vault / f"Design {i}.md").write_text(
            f"# Design {i}\n\nThe turret aims at targets, note {i}.\n", encoding="utf-8"
        )
    repo = tmp_path / "game"
    (repo / "Source").mkdir(parents=True)
    (repo / "Source" / "Turret.h").write_text(HEADER, encoding="utf-8")
    (repo / "Source" / "Turret.cpp").write_text(SOURCE, encoding="utf-8")
    (repo / "Binaries").mkdir()
    (repo / "Binaries" / "Built.cpp").write_text("int Built() { return 1; }\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    data = tmp_path / "data"
    where = ["--vault", str(vault), "--data-dir", str(data)]
    assert runner.invoke(app, ["sources", "add", "game", str(repo), *where]).exit_code == 0
    result = runner.invoke(app, ["index", *where])
    assert result.exit_code == 0, result.output
    return {"vault": vault, "data": data, "repo": repo}


def test_collections_list_the_vault_and_each_source(env):
    settings = Settings(vault=env["vault"], data_dir=env["data"])
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
        wait_idle(live)
        wait_until(lambda: not live.state.sources.scanning, 60)
        with live.client() as client:
            listed = client.get("/v1/collections")
            assert listed.status_code == 200, listed.text
            body = listed.json()
            anonymous = httpx.get(f"{live.url}/v1/collections")
    assert anonymous.status_code == 401  # behind the token, as every route but health
    assert body["default"] == "all" and body["scanning"] is False and body["problem"] is None
    vault, game = body["collections"]
    assert (vault["name"], vault["kind"], vault["primary"], vault["files"]) == (
        "vault",
        "vault",
        True,
        3,
    )
    assert vault["path"] == str(env["vault"])
    assert (game["name"], game["kind"], game["primary"], game["indexed"]) == (
        "game",
        "code",
        False,
        True,
    )
    assert game["path"] == str(env["repo"]) and game["problem"] is None
    assert game["files"] == 2  # the header and its source file; Binaries/ is skipped
    assert game["chunks"] >= 2 and game["embedded"] == game["chunks"]
    assert game["skipped"] == 1
    assert [(f["path"], bool(f["why"])) for f in game["skipped_files"]] == [("Binaries/", True)]


def test_collections_say_what_cannot_be_indexed(env, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    where = ["--vault", str(env["vault"]), "--data-dir", str(env["data"])]
    assert runner.invoke(app, ["sources", "add", "docs", str(gone), *where]).exit_code == 0
    gone.rmdir()  # the folder went away after it was declared
    settings = Settings(vault=env["vault"], data_dir=env["data"])
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
        wait_idle(live)
        wait_until(lambda: not live.state.sources.scanning, 60)
        with live.client() as client:
            body = client.get("/v1/collections").json()
    docs = {c["name"]: c for c in body["collections"]}["docs"]
    assert docs["indexed"] is False and docs["files"] == 0
    assert docs["problem"] and str(gone) in docs["problem"]


def test_code_hits_and_citations_carry_the_header_pairing(env):
    settings = Settings(vault=env["vault"], data_dir=env["data"])
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
        wait_idle(live)
        wait_until(lambda: not live.state.sources.scanning, 60)
        with live.client() as client:
            found = client.post(
                "/v1/search", json={"query": "ATurret AimAtTarget", "collections": ["game"]}
            ).json()["results"]
            notes = client.post(
                "/v1/search", json={"query": "turret aims", "collections": ["vault"]}
            ).json()["results"]
        body = {
            "question": "How does the turret barrel turn towards the nearest target in range?",
            "collections": ["game"],
        }
        with (
            httpx.Client(timeout=60) as client,
            client.stream("POST", f"{live.url}/v1/ask", json=body, headers=live.auth) as answer,
        ):
            events = [(e.event, json.loads(e.data)) for e in read_sse(answer.iter_lines())]
    hits = {(hit["note_path"], hit["symbol"]): hit for hit in found}
    defined = hits[("Source/Turret.cpp", "ATurret::AimAtTarget")]
    assert defined["related_file"] == "Source/Turret.h"
    assert defined["declared_at"] == "Source/Turret.h:6-7"  # its doc comment and declaration
    header = next(hit for hit in found if hit["note_path"] == "Source/Turret.h")
    assert header["related_file"] == "Source/Turret.cpp" and header["declared_at"] is None
    assert notes and all(h["related_file"] is None and h["declared_at"] is None for h in notes)
    assert events[-1][0] == "final", events[-1]
    citations = events[-1][1]["citations"]
    cited = {c["symbol"]: c for c in citations if c["note_path"] == "Source/Turret.cpp"}[
        "ATurret::AimAtTarget"
    ]
    assert cited["source_kind"] == "code" and cited["collection"] == "game"
    assert cited["related_file"] == "Source/Turret.h"
    assert cited["declared_at"] == "Source/Turret.h:6-7"
    # the cited lines verbatim, so the pane can show a file it cannot open
    lines = SOURCE.splitlines()[cited["line_start"] - 1 : cited["line_end"]]
    assert cited["text"] == "\n".join(lines)


def test_citations_from_a_docs_folder_carry_their_passage(env, tmp_path):
    docs = tmp_path / "manual"
    docs.mkdir()
    (docs / "Turret guide.md").write_text(
        "# Turret guide\n\n## Calibration\n\nCalibrate the turret barrel with the gyroscope "
        "before every match.\n",
        encoding="utf-8",
    )
    for i in range(6):
        (docs / f"Other {i}.md").write_text(f"# Other {i}\n\nUnrelated page {i}.\n", "utf-8")
    where = ["--vault", str(env["vault"]), "--data-dir", str(env["data"])]
    added = runner.invoke(
        app, ["sources", "add", "manual", str(docs), "--kind", "markdown", *where]
    )
    assert added.exit_code == 0, added.output
    assert runner.invoke(app, ["index", *where]).exit_code == 0
    settings = Settings(vault=env["vault"], data_dir=env["data"])
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
        wait_idle(live)
        wait_until(lambda: not live.state.sources.scanning, 60)
        body = {"question": "calibrate the turret barrel gyroscope", "collections": ["manual"]}
        with (
            httpx.Client(timeout=60) as client,
            client.stream("POST", f"{live.url}/v1/ask", json=body, headers=live.auth) as answer,
        ):
            events = [(e.event, json.loads(e.data)) for e in read_sse(answer.iter_lines())]
    assert events[-1][0] == "final", events[-1]
    cited = events[-1][1]["citations"][0]
    assert (cited["collection"], cited["note_path"]) == ("manual", "Turret guide.md")
    assert cited["source_kind"] == "md"
    assert "Calibrate the turret barrel with the gyroscope" in cited["text"]


def test_a_search_over_both_reports_its_routing(env):
    """Issue 43: with no collection chosen, `/v1/search` says how much each collection
    contributed and why; one collection chosen, no `routing`. `vault-rag search --explain`
    prints the decision in one line, `--json` carries it (in-process: no server runs here)."""
    settings = Settings(vault=env["vault"], data_dir=env["data"])
    query = "where is ATurret::AimAtTarget implemented"
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
        wait_idle(live)
        wait_until(lambda: not live.state.sources.scanning, 60)
        with live.client() as client:
            both = client.post("/v1/search", json={"query": query}).json()
            one = client.post("/v1/search", json={"query": query, "collections": ["game"]}).json()
    routing = both["routing"]
    assert routing["searched"] == ["vault", "game"]
    shares = {c["name"]: c for c in routing["collections"]}
    assert shares["vault"]["weight"] == 1 and shares["vault"]["reasons"] == []
    assert shares["game"]["weight"] > 1
    assert "identifier ATurret::AimAtTarget" in shares["game"]["reasons"]
    assert "code words" in shares["game"]["reasons"]
    assert both["results"][0]["symbol"] == "ATurret::AimAtTarget"
    assert one["routing"] is None

    where = ["--vault", str(env["vault"]), "--data-dir", str(env["data"])]
    explained = runner.invoke(app, ["search", query, "--explain", *where])
    assert explained.exit_code == 0, explained.output
    line = next(ln for ln in explained.output.splitlines() if ln.startswith("searched: "))
    assert line.startswith("searched: vault ×1, game ×")
    assert "identifier ATurret::AimAtTarget" in line
    printed = json.loads(runner.invoke(app, ["search", query, "--json", *where]).output)
    assert printed["routing"]["searched"] == ["vault", "game"]
    alone = json.loads(
        runner.invoke(app, ["search", query, "--json", "--collection", "game", *where]).output
    )
    assert "routing" not in alone
    plain = runner.invoke(app, ["search", query, *where])
    assert "searched: " not in plain.output  # only with --explain
