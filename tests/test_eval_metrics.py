"""The eval's metric wiring on hand-made rankings: every expected value below is worked out by
hand (recall = the answer is in the top k, RR = 1/rank, nDCG = 1/log2(1 + rank) for the
single virtual relevant document that any gold note stands for). No model, no index."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from vault_rag.evaluation.hints import HintLine, locate_hints
from vault_rag.evaluation.metrics import (
    GOLD,
    Hit,
    credits,
    heading_run,
    in_section,
    line_run,
    note_run,
    score,
)
from vault_rag.evaluation.qa import QAError, QAItem, load_qa
from vault_rag.evaluation.report import to_markdown
from vault_rag.evaluation.retrieval import evaluate


class Fixed:
    """A system that returns hand-made rankings per question."""

    def __init__(self, name: str, rankings: dict[str, list[Hit]]) -> None:
        self.name, self.rankings = name, rankings

    def search(self, question: str) -> list[Hit]:
        return self.rankings[question]


def item(qid: str, gold: list[str], kind: str = "lexical", heading: str | None = None) -> QAItem:
    return QAItem(id=qid, question=qid, gold=tuple(gold), gold_heading=heading, kind=kind)


def test_gold_at_rank_3_after_a_duplicate_note():
    # A, A, B, gold → notes A, B, gold: rank 3 (the repeated A does not count twice)
    hits = [Hit("A.md"), Hit("A.md"), Hit("B.md"), Hit("G.md"), Hit("C.md")]
    keys = note_run(hits, ["G.md"], k=10)
    assert keys == ["A.md", "B.md", GOLD, "C.md"]
    values = score({"q": keys})["q"]
    assert values["recall@1"] == 0.0
    assert values["recall@5"] == 1.0 and values["recall@10"] == 1.0
    assert values["mrr@10"] == pytest.approx(1 / 3)
    assert values["ndcg@10"] == pytest.approx(1 / math.log2(4))  # 0.5


def test_any_gold_counts_once_and_embedded_in_credits():
    # The second result is an embedded passage written in E.md and shown in G2.md: it credits
    # G2.md (a gold alternative). The later G1.md result is the same virtual answer, not a
    # second relevant document, so nDCG stays that of rank 2.
    hits = [Hit("X.md"), Hit("E.md", embedded_in=("G2.md",)), Hit("G1.md")]
    assert credits(hits[1], ["G1.md", "G2.md"]) and not credits(hits[0], ["G1.md"])
    keys = note_run(hits, ["G1.md", "G2.md"], k=10)
    assert keys == ["X.md", GOLD]
    values = score({"q": keys})["q"]
    assert values["mrr@10"] == pytest.approx(0.5)
    assert values["ndcg@10"] == pytest.approx(1 / math.log2(3))  # 0.6309…
    assert values["recall@1"] == 0.0 and values["recall@5"] == 1.0


def test_no_hit_scores_zero_and_an_empty_list_is_not_dropped():
    values = score({"miss": ["A.md", "B.md"], "empty": []})
    assert values["miss"] == dict.fromkeys(values["miss"], 0.0)
    assert values["empty"] == dict.fromkeys(values["empty"], 0.0)


def test_gold_beyond_k_notes_is_a_miss():
    hits = [Hit(f"N{i}.md") for i in range(12)] + [Hit("G.md")]
    keys = note_run(hits, ["G.md"], k=10)
    assert len(keys) == 10 and GOLD not in keys
    assert score({"q": keys})["q"]["recall@10"] == 0.0


def test_tied_system_scores_keep_the_system_order():
    # trec_eval sorts tied scores by document id; the wiring must give each rank its own
    # score. "Z.md" sorts after the gold key, so a tie would have moved the gold to rank 1.
    keys = note_run([Hit("Z.md"), Hit("G.md")], ["G.md"], k=10)
    values = score({"q": keys})["q"]
    assert values["recall@1"] == 0.0 and values["mrr@10"] == pytest.approx(0.5)


def test_heading_level_match():
    assert in_section("Sync > Set up > Log in", "Set up")  # a subsection of the answer
    assert in_section("Sync > Set up", "sync >  set up")  # a path, case and spaces ignored
    assert not in_section("Sync > Set up", "Sync > Log in")
    assert not in_section("", "Set up")
    hits = [
        Hit("G.md", "G > Intro", chunk_id="1"),  # right note, wrong section
        Hit("O.md", "Set up", chunk_id="2"),  # right heading text, wrong note
        Hit("G.md", "G > Set up > Details", chunk_id="3"),  # the answer, rank 3
        Hit("G.md", "G > Set up", chunk_id="4"),
    ]
    keys = heading_run(hits, ["G.md"], "Set up", k=10)
    assert keys.index(GOLD) == 2
    values = score({"q": keys})["q"]
    assert values["mrr@10"] == pytest.approx(1 / 3) and values["recall@1"] == 0.0


def test_evaluate_groups_by_kind_skips_off_topic_and_lists_misses():
    items = [
        item("q1", ["G.md"]),  # rank 1
        item("q2", ["H.md"], kind="paraphrase", heading="Part"),  # note rank 2, heading rank 3
        item("q3", ["K.md"], kind="paraphrase"),  # not found
        item("q4", [], kind="off_topic"),
    ]
    rankings = {
        "q1": [Hit("G.md", "G")],
        "q2": [Hit("X.md"), Hit("H.md", "H > Other"), Hit("H.md", "H > Part")],
        "q3": [Hit("Y.md", "Y > Top")],
        "q4": [Hit("G.md")],
    }
    report = evaluate(items, [Fixed("fixed", rankings)], k=10)
    assert (report["questions"], report["scored"], report["off_topic"]) == (4, 3, 1)
    note = report["systems"]["fixed"]["note"]
    assert note["overall"]["n"] == 3
    assert note["overall"]["recall@1"] == pytest.approx(1 / 3)
    assert note["overall"]["recall@5"] == pytest.approx(2 / 3)
    assert note["overall"]["mrr@10"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert note["by_kind"]["paraphrase"]["n"] == 2
    assert note["by_kind"]["paraphrase"]["mrr@10"] == pytest.approx(0.25)
    assert "off_topic" not in note["by_kind"]
    heading = report["systems"]["fixed"]["heading"]
    assert heading["overall"]["n"] == 1
    assert heading["overall"]["mrr@10"] == pytest.approx(1 / 3)
    misses = {m["id"]: m for m in report["systems"]["fixed"]["misses"]}
    assert set(misses) == {"q2", "q3"}
    assert misses["q2"]["gold_rank"] == 2 and misses["q3"]["gold_rank"] is None
    assert misses["q3"]["first"] == {"note_path": "Y.md", "heading_path": "Y > Top"}

    markdown = to_markdown(report, "fixed set").splitlines()
    # nDCG@10 = (1 + 1/log2(3) + 0) / 3 = 0.544
    assert "| fixed | .333 | .667 | .667 | .500 | .544 |" in markdown
    assert "| lexical | 1 | 1.00 / 1.00 / 1.00 |" in markdown
    assert "| paraphrase | 2 | .000 / .500 / .250 |" in markdown


def test_question_file_errors_name_every_bad_line(tmp_path: Path):
    good = {"id": "a", "question": "Where?", "gold": ["G.md"], "kind": "lexical"}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "id": "b", "gold": "G.md"}),
        json.dumps({**good, "id": "c", "kind": "weird"}),
        json.dumps({**good, "id": "d", "gold": []}),  # empty gold, not off_topic
        json.dumps({**good}),  # duplicate id
        json.dumps({**good, "id": "e", "gold": ["../outside.md"]}),
    ]
    path = tmp_path / "qa.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(QAError) as caught:
        load_qa([path])
    message = str(caught.value)
    for number in (2, 3, 4, 5, 6, 7):
        assert f"qa.jsonl:{number}:" in message
    assert "qa.jsonl:1:" not in message
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(QAError, match="not in the vault"):
        load_qa([path], notes=["Other.md"])
    loaded = load_qa([path], notes=["G.md"])
    assert loaded[0].gold == ("G.md",) and not loaded[0].off_topic


def test_line_level_needs_the_cited_lines_to_hold_the_hint_line(tmp_path: Path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "G.md").write_text("# G\n\n## Setup\n\nSet   the Port to 8080.\n", encoding="utf-8")
    (vault / "E.md").write_text("# E\n\n![[G#Setup]]\n", encoding="utf-8")
    items = [
        replace(item("q1", ["E.md", "G.md"]), answer_hint="set the port"),  # found in G, line 5
        replace(item("q2", ["G.md"]), answer_hint="no such words"),
        item("q3", ["G.md"]),
    ]
    lines, missing = locate_hints(items, vault)
    assert lines == {"q1": HintLine("G.md", 5)} and missing == ["q2"]
    ranked = [
        Hit("G.md", "G > Setup", (), "a", line_start=1, line_end=4),  # the note, not the line
        Hit("E.md", "E", (), "b", line_start=3, line_end=5),  # holds line 5 of another note
        Hit("G.md", "G > Setup", (), "c", line_start=3, line_end=5),
    ]
    keys = line_run(ranked, "G.md", 5, k=10)
    assert keys.index(GOLD) == 2
    rankings = {"q1": ranked, "q2": ranked, "q3": ranked}
    report = evaluate(items, [Fixed("fixed", rankings)], k=10, hint_lines=lines)
    assert report["with_line"] == 1
    line = report["systems"]["fixed"]["line"]["overall"]
    assert line["n"] == 1 and line["mrr@10"] == pytest.approx(1 / 3)
    assert "Line level, overall (n = 1):" in to_markdown(report)
    # results without lines (the naive lists) are not scored at the line level
    bare = {q: [Hit(h.note_path, h.heading_path) for h in ranked] for q in rankings}
    assert "line" not in evaluate(items, [Fixed("bare", bare)], hint_lines=lines)["systems"]["bare"]


def test_a_blank_answer_hint_is_a_bad_line(tmp_path: Path):
    path = tmp_path / "qa.jsonl"
    good = {"id": "a", "question": "Where?", "gold": ["G.md"], "kind": "lexical"}
    path.write_text(json.dumps({**good, "answer_hint": " "}) + "\n", encoding="utf-8")
    with pytest.raises(QAError, match="answer_hint"):
        load_qa([path])
    path.write_text(json.dumps({**good, "answer_hint": " port "}) + "\n", encoding="utf-8")
    assert load_qa([path])[0].answer_hint == "port"
