"""The merge across collections (issues 27 and 43, `retrieval/collections.py`): a notes vault
and a much larger code tree (a real `git init` checkout of generated files), real Chroma and
BM25, the hash embedder. A code question's function comes first, a notes question's note comes
first, and the large tree does not take the notes' places; the plain rank-by-rank merge put the
vault first for every question. Then the calibrated evidence on hand-set numbers: what raises a
collection's weight in the routing decision (`retrieval/routing.py`) and what does not."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from vault_rag.retrieval.collection_null import CollectionNull, null_of
from vault_rag.retrieval.collections import decide_for, known_words, search_collections
from vault_rag.retrieval.hybrid import SearchResult, search_options
from vault_rag.retrieval.routing import merge_weighted

from index_helpers import vault_with_code_source

NOTES = {
    "Sourdough starter.md": "Feed the sourdough starter with rye flour and water every morning; "
    "a starter that doubles in six hours is ready for the dough.",
    "Pasta dough.md": "Knead the pasta dough with eggs and semolina, rest it under a towel, "
    "then roll sheets thin enough to read through.",
    "Tomato sauce.md": "Simmer crushed tomatoes with garlic and olive oil until the sauce "
    "thickens; salt at the end.",
    "Pizza oven.md": "Heat the pizza oven stone for an hour; bake the pizza two minutes "
    "and turn it once.",
    "Risotto.md": "Toast the rice in butter, add warm stock a ladle at a time and stir.",
    "Pickles.md": "Cover the cucumbers with brine of vinegar, dill and salt; wait a week.",
    "Bread crust.md": "Steam in the first ten minutes gives the loaf a thin, crackling crust.",
    "Stock.md": "Roast the bones, cover them with cold water and simmer for six hours.",
    "Pancakes.md": "Whisk milk, flour and eggs into a thin batter and let it stand.",
    "Curry paste.md": "Pound chillies, lemongrass, garlic and shallots into a smooth paste.",
}
CHECKSUM = """\
#include <stdint.h>

/* Rolling checksum of a byte buffer: two running sums folded modulo a prime. */
uint32_t rolling_checksum(const uint8_t *buffer, size_t length)
{
    uint32_t low = 1, high = 0;
    for (size_t i = 0; i < length; i++) {
        low = (low + buffer[i]) % 65521;
        high = (high + low) % 65521;
    }
    return (high << 16) | low;
}
"""
WORDS = ["stream", "window", "queue", "table", "state", "block", "header", "symbol", "node"]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("fair")
    vault = root / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(f"# {name[:-3]}\n\n{text}\n", encoding="utf-8")
    repo = root / "codec"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "checksum.c").write_text(CHECKSUM, encoding="utf-8")
    for i in range(120):  # a tree thirty times the vault's size
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)]
        (repo / "src" / f"part{i}.c").write_text(
            f"/* Reset the {a} of the {b} before the next {a}. */\n"
            f"void reset_{a}_{b}_{i}(struct {b} *s)\n{{\n    s->{a} = {i};\n}}\n",
            encoding="utf-8",
        )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with vault_with_code_source(vault, repo, root / "data", "codec") as found:
        settings, vault_index, source = found
        yield {"settings": settings, "indexes": {"vault": vault_index, "codec": source}}


def _search(indexes: dict, question: str) -> list[SearchResult]:
    options = search_options(indexes["settings"], k=10)
    return search_collections(indexes["indexes"], question, options)


def test_a_code_question_gets_its_function_first(indexes) -> None:
    hits = _search(
        indexes, "which function computes the rolling checksum of a buffer, low and high sums"
    )
    assert (hits[0].collection, hits[0].note_path) == ("codec", "src/checksum.c")
    assert hits[0].symbol == "rolling_checksum"


def test_a_notes_question_keeps_its_note_first_beside_a_large_tree(indexes) -> None:
    hits = _search(indexes, "how long do I rest the pasta dough with eggs and semolina")
    assert (hits[0].collection, hits[0].note_path) == ("vault", "Pasta dough.md")
    # the tree's 121 files do not crowd out the notes: the notes closest to it are in the top
    top = [(h.collection, h.note_path) for h in hits]
    assert sum(collection == "vault" for collection, _ in top[:5]) >= 3


def test_each_collection_keeps_its_own_order(indexes) -> None:
    question = "reset the window of the stream state"
    hits = _search(indexes, question)
    options = search_options(indexes["settings"], k=10)
    for name, index in indexes["indexes"].items():
        own = [r.chunk_id for r in search_collections({name: index}, question, options)]
        merged = [h.chunk_id for h in hits if h.collection == name]
        assert merged == own[: len(merged)]


def test_the_answer_cites_in_the_routed_order(indexes) -> None:
    """The answer graph keeps the merge's order (`Doc.rank`): its sources are the search's
    first, the tree's function first. Re-sorting the passages by their collections' own scores
    (which do not compare) brought the vault's best note, on pickles, up to the third source."""
    from vault_rag.graph.config import Resources
    from vault_rag.graph.run import ask
    from vault_rag.source_indexes.service import ServedSources

    settings, vault_index = indexes["settings"], indexes["indexes"]["vault"]
    question = "which function computes the rolling checksum of a buffer, low and high sums"
    searched = [(h.collection, h.note_path) for h in _search(indexes, question)]
    sources = ServedSources(settings, vault_index)
    try:
        resources = replace(
            Resources.from_settings(settings, vault_index), sources=sources, prior=None
        )
        result = asyncio.run(ask(question, resources))
    finally:
        sources.close()
    cited = [(c.get("collection", "vault"), c["note_path"]) for c in result.citations]
    assert cited[0] == searched[0] == ("codec", "src/checksum.c")
    assert cited == searched[: len(cited)]  # the first sources, in the search's order


def test_the_question_is_embedded_once_for_every_collection(indexes, monkeypatch) -> None:
    """The collections share the vault's model: one query embedding serves each collection's
    dense search and the merge's nulls (each search used to embed it again, and the merge
    once more). The real model still runs; the calls are only counted."""
    provider = indexes["indexes"]["vault"].provider
    assert indexes["indexes"]["codec"].provider is provider
    calls: list[str] = []
    embed = provider.embed_query

    def counted(text: str) -> list[float]:
        calls.append(text)
        return embed(text)

    monkeypatch.setattr(provider, "embed_query", counted)
    hits = _search(indexes, "which function computes the rolling checksum of a buffer")
    assert calls == ["which function computes the rolling checksum of a buffer"]
    assert (hits[0].collection, hits[0].symbol) == ("codec", "rolling_checksum")


def test_null_statistics_are_the_collections_own(indexes) -> None:
    vault, codec = (null_of(indexes["indexes"][n]) for n in ("vault", "codec"))
    assert vault is not None and codec is not None
    assert codec.units > 5 * vault.units
    assert null_of(indexes["indexes"]["codec"]) is codec  # kept until the index changes


def test_known_words_are_each_big_enough_index_s_vocabulary(indexes) -> None:
    """The words routing compares (`routing.vocabulary_words`, Latin-script tokens) as each real
    index knows them; the ten-note vault is under BM25's 20 passages, so it is not compared."""
    found = indexes["indexes"]
    question = "rolling checksum 的 sourdough starter"
    passages = {name: index.lexical.count() for name, index in found.items()}
    assert passages["vault"] < 20 <= passages["codec"]
    assert known_words(found, question, passages) == {"codec": {"rolling", "checksum"}}
    everyone = known_words(found, question, {"vault": 20, "codec": 20})
    assert everyone == {"vault": {"sourdough", "starter"}, "codec": {"rolling", "checksum"}}
    assert known_words(found, "滚动校验", passages) == {}  # no word to compare


def _result(chunk: str, cosine: float | None) -> SearchResult:
    return SearchResult(
        note_path=f"{chunk}.md", heading_path="", anchor="", chunk_id=chunk, score=0.0,
        text="", origin=f"{chunk}.md", line_start=1, line_end=1, dense_score=cosine,
    )  # fmt: skip


NULL = {"mean": np.array([0.5, 0.0]), "cov": np.diag([0.01, 0.01])}  # chance: 0.5 ± 0.1
QUERY = np.array([1.0, 0.0])


def _merged(lists: dict, nulls: dict, k: int, passages: dict | None = None) -> list[str]:
    weights = decide_for("q", lists, nulls, QUERY, passages).weights()
    return [r.chunk_id for r in merge_weighted(lists, weights, k)]


def _weight(lists: dict, nulls: dict, name: str, passages: dict | None = None, query=QUERY):
    return decide_for("q", lists, nulls, query, passages).weights()[name]


def _reasons(lists: dict, nulls: dict, name: str, passages: dict | None = None, query=QUERY):
    routing = decide_for("q", lists, nulls, query, passages)
    return next(list(c.reasons) for c in routing.collections if c.name == name)


def test_size_alone_does_not_lead() -> None:
    """The same best cosine, 4 sd above chance in both: in a collection of 50 units that is
    beyond chance, in one of 100,000 it is what chance gives (the best of 100,000 normals is
    about 4.3 sd), so the large source gets no weight; a cosine 8 sd above chance is evidence
    of its own and beats the vault's."""
    nulls = {
        "vault": CollectionNull(units=50, **NULL),
        "big": CollectionNull(units=100_000, **NULL),
    }
    lists = {"vault": [_result("n1", 0.9), _result("n2", 0.7)], "big": [_result("c1", 0.9)]}
    assert _weight(lists, nulls, "big") == 1
    assert _merged(lists, nulls, 3) == ["n1", "c1", "n2"]
    lists["big"] = [_result("c1", 1.3)]
    assert _weight(lists, nulls, "big") == 3
    assert _merged(lists, nulls, 3) == ["c1", "n1", "n2"]


def test_a_source_stronger_than_the_vault_but_within_chance_gets_no_weight() -> None:
    nulls = {n: CollectionNull(units=1000, **NULL) for n in ("vault", "code")}
    # the best of 1,000 reaches 3.2 sd by chance (the vault's 3 sd: -0.2), and p < .01 asks
    # 1.24 sd more: 3.5 sd (key 0.3) beats the vault but not chance, 4.7 sd (key 1.5) does
    lists = {"vault": [_result("n1", 0.80)], "code": [_result("c1", 0.85)]}
    assert _weight(lists, nulls, "code") == 1
    lists["code"] = [_result("c1", 0.97)]
    assert _reasons(lists, nulls, "code") == ["meaning beats the vault's (1.47 sd)"]
    assert _weight(lists, nulls, "code") == 3


def test_without_vectors_the_merge_is_rank_by_rank_vault_first() -> None:
    lists = {
        "vault": [_result("n1", None), _result("n2", None)],
        "code": [_result("c1", 0.9), _result("c2", 0.8)],
    }
    nulls = {"vault": None, "code": CollectionNull(np.zeros(2), np.eye(2), 100)}
    assert _merged(lists, nulls, 4) == ["n1", "c1", "n2", "c2"]
    routing = decide_for("q", lists, {"vault": None, "code": None}, None)
    assert routing.weights() == {"vault": 1, "code": 1}
    assert [r.chunk_id for r in merge_weighted(lists, routing.weights(), 4)] == [
        "n1", "c1", "n2", "c2"
    ]  # fmt: skip


def _lexical(chunk: str, bm25: float) -> SearchResult:
    result = _result(chunk, None)
    result.lexical_score = bm25
    return result


def test_strong_lexical_evidence_counts_on_the_size_independent_scale() -> None:
    """BM25 ÷ ln(passages) (retrieval/calibration.py's scale): 8.0 over 2,000 passages is 1.05,
    evidence of its own (≥ 0.68) and strong (≥ 0.93) beating the vault's 3.0 over 200 (0.57);
    5.0 over 2,000 (0.66) is neither; an index under 20 passages says nothing by BM25."""
    lists = {"vault": [_lexical("n1", 3.0)], "code": [_lexical("c1", 8.0)]}
    nulls = {"vault": None, "code": None}
    sizes = {"vault": 200, "code": 2000}
    # (no vectors: the vault cannot be called weak, only unknown)
    assert _reasons(lists, nulls, "code", sizes, None) == ["keywords beat the vault's (1.05)"]
    assert _weight(lists, nulls, "code", sizes, None) == 3
    assert _merged(lists, nulls, 2, sizes) == ["c1", "n1"]
    lists["code"] = [_lexical("c1", 5.0)]
    assert _weight(lists, nulls, "code", sizes, None) == 1
    lists = {"vault": [_lexical("n1", 3.0)], "code": [_lexical("c1", 8.0)]}
    assert _weight(lists, nulls, "code", {"vault": 200, "code": 10}, None) == 1
    assert _weight(lists, nulls, "code", None, None) == 1  # no counts: dense only
