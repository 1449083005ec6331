"""The note commands on the sample vault, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from vault_rag.cli import app

runner = CliRunner()


def test_resolve_inlines_embeds_and_reports_missing(sample_vault):
    result = runner.invoke(
        app, ["resolve", "Daily/2024-05-14", "--vault", str(sample_vault), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["path"] == "Daily/2024-05-14.md"
    assert payload["dependencies"], "the daily log embeds other notes"
    assert "![[" not in payload["text"].replace("![[Actor 生命周期#Destroyed 回调]]", "")
    assert [w["code"] for w in payload["warnings"]] == ["missing_heading"]


def test_resolve_by_name_prints_text(sample_vault):
    result = runner.invoke(app, ["resolve", "材质系统", "--vault", str(sample_vault)])
    assert result.exit_code == 0, result.output
    assert "材质" in result.stdout


def test_resolve_refuses_paths_outside_the_vault(sample_vault):
    result = runner.invoke(app, ["resolve", "../../etc/passwd", "--vault", str(sample_vault)])
    assert result.exit_code != 0
    assert "escapes the vault" in result.output


def test_unknown_note_is_a_clear_error(sample_vault):
    result = runner.invoke(app, ["chunks", "No Such Note", "--vault", str(sample_vault)])
    assert result.exit_code != 0
    assert "no note" in result.output


def test_chunks_json_shape(sample_vault):
    result = runner.invoke(
        app, ["chunks", "Gameplay/Actor 生命周期.md", "--vault", str(sample_vault), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert len(payload["chunks"]) >= 2
    first = payload["chunks"][0]
    assert first["note_path"] == "Gameplay/Actor 生命周期.md"
    assert first["hierarchy_path"].startswith("Actor 生命周期")
    lines = [(c["line_start"], c["line_end"]) for c in payload["chunks"]]
    assert lines == sorted(lines)


def test_demo_runs_as_a_new_user_would(tmp_path):
    """The README's main command: index the sample vault and answer a search."""
    proc = subprocess.run(
        [sys.executable, "-m", "vault_rag", "demo", "--data-dir", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    assert "notes seen 26 / changed 26" in proc.stdout  # 24 notes, a PDF and a canvas
    assert "UObject 与 GC" in proc.stdout  # the note that answers the demo question
    assert "missing_heading" in proc.stderr
    # The second question is answered by page 2 of the PDF: cited with its page, searched and
    # quoted in the answer's sources.
    pdf_cite = "[[Tools/Perforce Handbook.pdf#page=2]]"
    assert proc.stdout.count(pdf_cite) >= 2, proc.stdout
    assert "page 2" in proc.stdout
    assert "binary+l" in proc.stdout  # the extractive answer quotes the page's text
