"""`vault-rag eval` end to end on four notes of the bundled sample vault: the real indexer and
search, the real bundled model, the naive LangChain baseline, and its vector cache on re-run.
(Four notes, not the whole vault, to keep the model work to a few dozen passages.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from vault_rag.cli import app

NOTES = ("Tools/性能分析.md", "Rendering/材质系统.md", "C++/Subsystems.md", "Daily/2024-05-10.md")
QUESTIONS = [
    {
        "id": "stat-unit",
        "question": "stat unit 显示的 Game、Draw、GPU 分别代表什么？",
        "gold": ["Tools/性能分析.md"],
        "gold_heading": "stat unit",
        "kind": "lexical",
        "lang": "zh",
    },
    {
        "id": "mid",
        "question": "How do I change a scalar parameter of a material at runtime?",
        "gold": ["Rendering/材质系统.md"],
        "kind": "cross-lingual",
        "lang": "en",
    },
    {
        "id": "subsystem",
        "question": "How do I get my GameInstance subsystem from C++?",
        "gold": ["C++/Subsystems.md"],
        "kind": "lexical",
        "lang": "en",
    },
    {
        # The daily note shows the launch parameters only through ![[性能分析#…#启动参数]].
        "id": "daily-insights",
        "question": "那天记下的 Unreal Insights 启动参数是什么？",
        "gold": ["Daily/2024-05-10.md"],
        "kind": "embed-only",
        "lang": "zh",
    },
    {"id": "away", "question": "巴黎有几座机场？", "gold": [], "kind": "off_topic", "lang": "zh"},
]


def test_eval_scores_ours_and_the_naive_baseline(tmp_path: Path, sample_vault: Path):
    vault = tmp_path / "vault"
    for note in NOTES:
        (vault / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(sample_vault / note, vault / note)
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), "utf-8")
    args = ["eval", str(qa), "--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    runner = CliRunner()

    first = runner.invoke(app, [*args, "--baseline", "naive", "--side", "all", "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert (report["questions"], report["scored"], report["off_topic"]) == (5, 4, 1)
    assert set(report["systems"]) == {
        "ours",
        "ours-dense",
        "ours-lexical",
        "naive-dense",
        "naive-lexical",
        "naive-hybrid",
    }
    ours = report["systems"]["ours"]
    assert ours["note"]["overall"]["n"] == 4
    # Four notes and plain questions: the product finds every answer in the top 5, the
    # embed-only one through `embedded_in` (the text is written in 性能分析, shown in the daily).
    assert ours["note"]["overall"]["recall@5"] == 1.0
    assert ours["note"]["by_kind"]["embed-only"]["recall@5"] == 1.0
    assert ours["heading"]["overall"]["n"] == 1
    assert report["options"]["feedback_prior"] is False
    assert report["naive"]["chunks"] > 0
    assert report["naive"]["vectors_computed"] > 0
    for name in ("naive-dense", "naive-hybrid"):
        assert report["systems"][name]["note"]["overall"]["n"] == 4

    # A re-run costs no model call: the index is up to date and naive vectors are cached.
    again = runner.invoke(app, [*args, "--baseline", "naive", "--json"])
    assert again.exit_code == 0, again.output
    rerun = json.loads(again.stdout)
    assert rerun["index"]["chunks_embedded"] == 0
    assert rerun["naive"]["vectors_computed"] == 0
    first_calls = report["naive"]["vectors_computed"] + report["naive"]["vectors_reused"]
    assert rerun["naive"]["vectors_reused"] == first_calls
    assert set(rerun["systems"]) == {"ours", "naive-dense", "naive-lexical", "naive-hybrid"}
    assert rerun["systems"]["ours"]["note"] == ours["note"]

    text = runner.invoke(app, args)  # the table form
    assert text.exit_code == 0, text.output
    assert "note level" in text.stdout and "R@5" in text.stdout and "MRR@10" in text.stdout


def test_eval_rejects_a_bad_question_file_before_indexing(tmp_path: Path, sample_vault: Path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"id": "x", "question": "?", "gold": "not a list"}\n', encoding="utf-8")
    data = tmp_path / "data"
    result = CliRunner().invoke(
        app, ["eval", str(qa), "--vault", str(sample_vault), "--data-dir", str(data)]
    )
    assert result.exit_code == 1
    message = " ".join(result.output.split())  # the console wraps long lines
    assert "qa.jsonl:1: `gold` must be a list" in message
    assert not data.exists()  # nothing indexed


def test_eval_rejects_a_gold_note_missing_from_the_vault(tmp_path: Path, sample_vault: Path):
    vault = tmp_path / "vault"
    vault.mkdir()
    shutil.copy(sample_vault / "C++/Subsystems.md", vault / "Subsystems.md")
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"id": "x", "question": "?", "gold": ["Nope.md"]}\n', encoding="utf-8")
    result = CliRunner().invoke(
        app, ["eval", str(qa), "--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    )
    assert result.exit_code == 1
    assert "'Nope.md' is not in the vault" in " ".join(result.output.split())
