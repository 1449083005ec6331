"""The eval's code-source judgement (issue 27): gold files of a source as `source:path`, the
symbol level (`gold_symbol`) and "every gold item found" (`gold_all`) for questions that need a
note and a code file together. Hand-made rankings with values worked out by hand, then
`vault-rag eval` end to end on a small vault with a real code source beside it (real indexer,
tree-sitter parser, bundled model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.evaluation.metrics import Hit, all_found, symbol_matches, symbol_run
from vault_rag.evaluation.qa import QAError, QAItem, load_qa
from vault_rag.evaluation.report import to_markdown
from vault_rag.evaluation.retrieval import evaluate


class Fixed:
    def __init__(self, name: str, rankings: dict[str, list[Hit]]) -> None:
        self.name, self.rankings = name, rankings

    def search(self, question: str) -> list[Hit]:
        return self.rankings[question]


def test_symbol_matches_the_last_names_without_templates_or_anonymous_namespaces():
    assert symbol_matches("leveldb::DBImpl::Write", "DBImpl::Write")
    assert symbol_matches("leveldb::DBImpl::Write", "Write")
    assert not symbol_matches("leveldb::DBImpl::WriteLevel0Table", "DBImpl::Write")
    assert not symbol_matches("leveldb::Other::Write", "DBImpl::Write")
    assert symbol_matches("leveldb::SkipList<Key, Comparator>::Insert", "SkipList::Insert")
    assert symbol_matches("leveldb::(anonymous)::LRUCache::Insert", "leveldb::LRUCache::Insert")
    assert not symbol_matches("", "Write") and not symbol_matches("A::B", "")
    assert not symbol_matches("Write", "DBImpl::Write")  # gold more precise than the unit


def test_symbol_run_needs_the_gold_file_and_the_symbol():
    gold = ["src:db/db_impl.cc"]
    hits = [
        Hit("src:db/other.cc", symbol="leveldb::DBImpl::Write"),  # right name, wrong file
        Hit("src:db/db_impl.cc", symbol="leveldb::DBImpl::Get"),  # right file, wrong symbol
        Hit("src:db/db_impl.cc", symbol="leveldb::DBImpl::Write", chunk_id="c3"),
    ]
    keys = symbol_run(hits, gold, ["DBImpl::Write"], 10)
    assert keys.index("<gold>") == 2
    assert symbol_run(hits, gold, ["DBImpl::Write"], 2) == [
        "0:src:db/other.cc",
        "1:src:db/db_impl.cc",
    ]


def test_all_found_counts_distinct_notes_and_files():
    gold = ["Note.md", "src:a.cc"]
    hits = [Hit("Note.md"), Hit("Note.md"), Hit("X.md"), Hit("src:a.cc")]
    assert all_found(hits, gold, 3)  # Note, X, a.cc: the second Note passage takes no place
    assert not all_found(hits, gold, 2)
    assert not all_found([Hit("Note.md")], gold, 10)


def test_evaluate_reports_file_symbol_and_every_gold_levels():
    code = QAItem("c1", "c1", ("src:a.cc",), kind="paraphrase", gold_symbols=("A::f",))
    code2 = QAItem("c2", "c2", ("src:b.cc",), kind="paraphrase", gold_symbols=("B::g", "B::h"))
    mixed = QAItem("m1", "m1", ("Note.md", "src:a.cc"), kind="multi-aspect", gold_all=True)
    vault_only = QAItem("v1", "v1", ("Note.md",), kind="lexical")
    rankings = {
        # file at rank 1, symbol at passage rank 2
        "c1": [Hit("src:a.cc", symbol="ns::A::other"), Hit("src:a.cc", symbol="ns::A::f")],
        # file at rank 2, symbol (the second alternative) at passage rank 2
        "c2": [Hit("Note.md"), Hit("src:b.cc", symbol="B::h")],
        # the note first, the code file 6th distinct: all@5 no, all@10 yes
        "m1": [Hit("Note.md"), *(Hit(f"X{i}.md") for i in range(4)), Hit("src:a.cc")],
        "v1": [Hit("Note.md")],
    }
    report = evaluate([code, code2, mixed, vault_only], [Fixed("f", rankings)], k=10)
    system = report["systems"]["f"]
    assert report["with_symbol"] == 2
    # file level over the 4: ranks 1, 2, 1 (the note credits m1: any gold), 1
    assert system["note"]["overall"]["mrr@10"] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    symbol = system["symbol"]["overall"]
    assert symbol["n"] == 2
    assert symbol["recall@1"] == 0.0 and symbol["recall@5"] == 1.0
    assert symbol["mrr@10"] == pytest.approx(0.5)
    assert system["all"] == {"n": 1, "all@5": 0.0, "all@10": 1.0}
    markdown = to_markdown(report, "code").splitlines()
    assert "Symbol level (code), overall (n = 2):" in markdown
    assert "| f | .000 | 1.00 |" in markdown
    # A set without code gold keeps its report as it was: no symbol or all keys.
    plain = evaluate([vault_only], [Fixed("f", rankings)], k=10)
    assert "with_symbol" not in plain and set(plain["systems"]["f"]) == {
        "note",
        "heading",
        "misses",
        "seconds",
    }


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_question_files_check_code_gold(tmp_path: Path):
    base = {"id": "a", "question": "Where?", "kind": "paraphrase"}
    bad = [
        {**base, "gold": ["Note.md"], "gold_symbol": "A::f"},  # a symbol but no code file
        {**base, "id": "b", "gold": ["src:a.cc"], "gold_symbol": [""]},
        {**base, "id": "c", "gold": ["src:a.cc"], "gold_all": True},  # all of one item
        {**base, "id": "d", "gold": ["Note.md", "src:a.cc"], "gold_all": "yes"},
    ]
    with pytest.raises(QAError) as caught:
        load_qa([_write(tmp_path / "bad.jsonl", bad)])
    for number in (1, 2, 3, 4):
        assert f"bad.jsonl:{number}:" in str(caught.value)
    good = _write(
        tmp_path / "good.jsonl",
        [{**base, "gold": ["Note.md", "src:a.cc"], "gold_all": True, "gold_symbol": "A::f"}],
    )
    with pytest.raises(QAError, match=r"gold file 'src:a\.cc' is not in its source's index"):
        load_qa([good], notes=["Note.md"])
    (loaded,) = load_qa([good], notes=["Note.md", "src:a.cc"])
    assert loaded.gold_all and loaded.gold_symbols == ("A::f",)


NOTE = """# Ring buffer notes

Our telemetry keeps the last samples in `RingBuffer`; when it is full the oldest sample is
overwritten. See the code in `ring.cc`.
"""
CODE = {
    "ring.cc": """// A fixed-size ring of samples.
class RingBuffer {
 public:
  // Adds a sample, overwriting the oldest one when the ring is full.
  void Push(int sample) {
    data_[head_] = sample;
    head_ = (head_ + 1) % kSize;
    if (count_ < kSize) ++count_;
  }

 private:
  static const int kSize = 64;
  int data_[kSize];
  int head_ = 0;
  int count_ = 0;
};
""",
    "parse.cc": """// Reads decimal numbers from a comma separated line.
int ParseCsvNumbers(const char* line, int* out, int max) {
  int n = 0;
  while (*line && n < max) {
    out[n++] = atoi(line);
    while (*line && *line != ',') ++line;
    if (*line == ',') ++line;
  }
  return n;
}
""",
}


def test_eval_with_a_code_source_beside_the_vault(tmp_path: Path):
    vault, src = tmp_path / "vault", tmp_path / "src"
    vault.mkdir()
    src.mkdir()
    (vault / "Ring buffer.md").write_text(NOTE, encoding="utf-8")
    for name, text in CODE.items():
        (src / name).write_text(text, encoding="utf-8")
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    runner = CliRunner()
    added = runner.invoke(app, ["sources", "add", "src", str(src), *where])
    assert added.exit_code == 0, added.output
    qa = _write(
        tmp_path / "qa.jsonl",
        [
            {
                "id": "code",
                "question": "which function splits a comma separated line into numbers?",
                "gold": ["src:parse.cc"],
                "gold_symbol": "ParseCsvNumbers",
                "kind": "paraphrase",
            },
            {
                "id": "mixed",
                "question": "ring buffer: my note, and where does Push overwrite the oldest?",
                "gold": ["Ring buffer.md", "src:ring.cc"],
                "gold_all": True,
                "kind": "multi-aspect",
            },
        ],
    )
    result = runner.invoke(app, ["eval", str(qa), *where, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["options"]["collections"] == ["vault", "src"]
    system = report["systems"]["ours"]
    # Three files in all, so every gold item is within the top 5 whatever the order.
    assert system["note"]["overall"]["recall@5"] == 1.0
    assert system["symbol"]["overall"]["n"] == 1
    assert system["symbol"]["overall"]["recall@5"] == 1.0  # 2 units only: in the top 5
    assert system["all"] == {"n": 1, "all@5": 1.0, "all@10": 1.0}
    # The vault alone cannot find the code: the same set, searched in the vault only.
    alone = runner.invoke(app, ["eval", str(qa), *where, "--json", "--collection", "vault"])
    assert alone.exit_code == 0, alone.output
    alone_report = json.loads(alone.stdout)
    assert alone_report["options"]["collections"] == ["vault"]
    assert alone_report["systems"]["ours"]["all"]["all@10"] == 0.0
    assert alone_report["systems"]["ours"]["symbol"]["overall"]["recall@10"] == 0.0
    # A gold file the source does not hold is an error before anything is scored.
    shutil.copy(qa, tmp_path / "typo.jsonl")
    typo = tmp_path / "typo.jsonl"
    typo.write_text(typo.read_text("utf-8").replace("src:parse.cc", "src:parser.cc"), "utf-8")
    failed = runner.invoke(app, ["eval", str(typo), *where])
    assert failed.exit_code != 0
    assert "src:parser.cc" in failed.output and "not in its source's index" in failed.output
    unknown = runner.invoke(app, ["eval", str(qa), *where, "--collection", "nope"])
    assert unknown.exit_code != 0 and "no collection named 'nope'" in unknown.output
