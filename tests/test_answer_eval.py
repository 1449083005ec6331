"""`vault-rag eval-answers` as docs/answers.md runs it: a QA file over the sample vault with no
model, scored per question and summed up; and the scoring rules on records of known shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from test_graph_helpers import shared_index
from vault_rag.cli import app
from vault_rag.graph.evaluate import AnswerRecord, AnswerReport, load_qa, subset

runner = CliRunner()
QA = [
    {
        "id": "q1",
        "question": "BeginPlay 和构造函数有什么区别？构造函数里能访问 GetWorld 吗？",
        "gold": ["Gameplay/Actor 生命周期.md"],
        "kind": "lexical",
    },
    {
        "id": "q2",
        "question": "How do I replicate a property to clients?",
        "gold": ["Networking/Replication and RPCs.md"],
        "kind": "paraphrase",
    },
    {"id": "q3", "question": "红烧肉怎么做才肥而不腻？", "gold": [], "kind": "off_topic"},
]


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LLM_MODEL", "LLM_BASE_URL", "LLM_API_KEY", "TAVILY_API_KEY", "WEB_MODE"):
        monkeypatch.delenv(f"VAULT_RAG_{name}", raising=False)
    monkeypatch.delenv("VAULT_RAG_CONFIG", raising=False)


def test_eval_answers_scores_every_question(tmp_path: Path, sample_vault: Path) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(shared_index().data_dir, data_dir)
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QA), "utf-8")
    args = ["eval-answers", str(qa), "--vault", str(sample_vault), "--data-dir", str(data_dir)]
    result = runner.invoke(app, [*args, "--json", "--label", "none"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    summary = report["summary"]
    assert summary["label"] == "none" and summary["questions"] == 3
    assert (summary["answerable"], summary["grounded"], summary["right_note"]) == (2, 2, 2)
    assert (summary["off_topic"], summary["off_topic_declined"]) == (1, 1)
    assert summary["llm_calls_max"] == 0 and summary["over_budget"] == 0
    by_id = {a["id"]: a for a in report["answers"]}
    assert by_id["q1"]["evidence"] == "strong" and by_id["q1"]["aspect_questions"]
    assert by_id["q3"]["declined"] and by_id["q3"]["cited_notes"] == []
    assert by_id["q3"]["nodes"] == ["take_question", "classify_intent", "decline"]
    # The table docs/answers.md shows.
    table = runner.invoke(app, [*args, "--every", "2", "--label", "none"])
    assert table.exit_code == 0, table.output
    assert "| none | 1/1 | 1/1 | 1/1 | 0 (0) | 0 |" in table.stdout


def test_scoring_rules(tmp_path: Path) -> None:
    def record(**values: object) -> AnswerRecord:
        base: dict[str, object] = {
            "id": "x",
            "kind": "lexical",
            "question": "q",
            "gold": ["A.md"],
            "intent": "on_topic",
            "cited_notes": [],
            "grounded": False,
            "right_note": False,
            "declined": False,
            "llm_calls": 4,
            "aspects": 1,
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "first_token_s": 1.0,
            "total_s": 2.0,
        }
        return AnswerRecord(**{**base, **values})  # type: ignore[arg-type]

    report = AnswerReport(
        "m",
        [
            record(grounded=True, right_note=True),
            record(grounded=True, llm_calls=7, aspects=1),  # over 4 + 2×1
            record(gold=[], declined=True, llm_calls=1),
        ],
    )
    summary = report.summary()
    assert (summary["grounded"], summary["right_note"], summary["answerable"]) == (2, 1, 2)
    assert summary["off_topic_declined"] == 1 and summary["over_budget"] == 1
    assert summary["llm_calls_p50"] == 4 and summary["llm_calls_max"] == 7
    assert summary["prompt_tokens"] == 30 and summary["first_token_s_p50"] == 1.0
    # --every keeps every off-topic question and every Nth answerable one.
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QA), "utf-8")
    assert [i.id for i in subset(load_qa(qa), 2)] == ["q1", "q3"]
    qa.write_text('{"id": "q1"}\n', "utf-8")
    with pytest.raises(ValueError, match=r"qa\.jsonl:1"):
        load_qa(qa)


def test_cited_files_of_a_source_are_named_as_gold_names_them() -> None:
    """A code unit's citation is a vault-kind record of its collection: it counts as
    `zlib:inflate.c` (the QA files' gold), never as a vault note `inflate.c`."""
    from vault_rag.graph.evaluate import cited_notes

    citations = [
        {"kind": "vault", "note_path": "inflate.c", "origin": "inflate.c", "collection": "zlib"},
        {"kind": "vault", "note_path": "A.md", "origin": "B.md", "collection": "vault"},
        {"kind": "vault", "note_path": "C.md", "origin": "promoted"},  # before collections
        {"kind": "web", "url": "https://example.com/", "cite": "https://example.com/"},
    ]
    assert cited_notes(citations) == ["zlib:inflate.c", "A.md", "B.md", "C.md"]
