"""Every command that takes `--vault` also reads it from `VAULT_RAG_VAULT`, like the settings."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.feedback.answers import record_answer


def test_feedback_honours_the_vault_from_the_environment(tmp_path: Path):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nText.\n", encoding="utf-8")
    record_answer(
        data,
        answer_id="a1",
        question="q",
        answer="see [[Note]]",
        citations=[{"kind": "vault", "note_path": "Note.md", "chunk_id": "c1"}],
        model="extractive",
        thread_id=None,
    )
    runner = CliRunner()
    env = {"VAULT_RAG_VAULT": str(vault)}
    result = runner.invoke(app, ["feedback", "a1", "up", "--data-dir", str(data)], env=env)
    assert result.exit_code == 0, result.output
    assert "recorded" in result.output
    missing = runner.invoke(app, ["feedback", "a1", "up", "--data-dir", str(data)], env={})
    assert missing.exit_code != 0 and "--vault" in missing.output
