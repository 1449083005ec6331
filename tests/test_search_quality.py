"""The right sample-vault note is in the top 5 for questions in Chinese and English,
paraphrases and cross-lingual ones included (real local model, real Chroma, real BM25)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vault_rag.index.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

QUESTIONS = yaml.safe_load(
    (Path(__file__).parent / "data" / "sample_questions.yaml").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory, sample_vault):
    from vault_rag.embeddings.local import LocalE5Provider

    index = VaultIndex(sample_vault, tmp_path_factory.mktemp("data"), LocalE5Provider())
    Indexer(index).run()
    yield index
    index.close()


def hit(result, expected: str) -> bool:
    return expected in (result.note_path, result.origin) or expected in result.embedded_in


def test_question_set_is_broad():
    kinds = {q["kind"] for q in QUESTIONS}
    langs = {q["lang"] for q in QUESTIONS}
    assert len(QUESTIONS) >= 24
    assert {"direct", "paraphrase", "cross-lingual"} <= kinds and {"zh", "en"} <= langs


SAME_LANGUAGE = [q for q in QUESTIONS if q["kind"] != "cross-lingual"]
CROSS_LINGUAL = [q for q in QUESTIONS if q["kind"] == "cross-lingual"]


def top5(index: VaultIndex, case: dict[str, str]) -> tuple[bool, list[tuple[str, str]]]:
    results = hybrid_search(index, case["question"], SearchOptions(k=5))
    return any(hit(r, case["expected_note"]) for r in results), [
        (r.note_path, r.heading_path) for r in results
    ]


@pytest.mark.parametrize("case", SAME_LANGUAGE, ids=[q["question"][:40] for q in SAME_LANGUAGE])
def test_expected_note_in_top_5(sample_index: VaultIndex, case: dict[str, str]):
    found, results = top5(sample_index, case)
    assert found, (
        f"{case['kind']} {case['question']!r}: expected {case['expected_note']}, got {results}"
    )


def test_cross_lingual_questions_mostly_find_their_note(sample_index: VaultIndex):
    """A question in one language, the note in the other: the bundled 4-bit e5-small carries
    this alone (BM25 shares no words). Measured: 8 of 10 in the top 5; the bar is 8."""
    misses = []
    for case in CROSS_LINGUAL:
        found, results = top5(sample_index, case)
        if not found:
            misses.append((case["question"], case["expected_note"], results))
    assert len(CROSS_LINGUAL) - len(misses) >= 8, misses


def test_filters_restrict_results(sample_index: VaultIndex):
    results = hybrid_search(
        sample_index, "材质 参数 Material", SearchOptions(k=10, folder="Rendering")
    )
    assert results and all(r.note_path.startswith("Rendering/") for r in results)


def test_per_note_cap(sample_index: VaultIndex):
    for cap in (1, 2):
        results = hybrid_search(
            sample_index, "Actor BeginPlay Tick", SearchOptions(k=10, per_note_cap=cap)
        )
        notes = [r.note_path for r in results]
        assert results and max(notes.count(n) for n in notes) <= cap
