"""The routing decision of a search over several collections (issue 43,
`retrieval/routing.py`), on hand-set calibrated scores: which evidence raises a source's weight
and which does not, the vault's note words, and the weighted merge (equal weights: rank by
rank, the vault first). The search over real indexes: tests/test_fair_merge.py,
tests/test_collections_api.py and tests/test_mcp_collections.py."""

from __future__ import annotations

import pytest

from vault_rag.index.bm25.tokenize import tokenize
from vault_rag.retrieval.hybrid import SearchResult
from vault_rag.retrieval.routing import (
    Routing,
    decide,
    identifiers,
    known_identifiers,
    merge_weighted,
    routing_line,
    vocabulary_words,
)

ORDER = ["vault", "code"]
NAMES = {"code": frozenset({"deflate_slow", "DBImpl::Write", "Write", "crc32.c", "crc32"})}
# Scores of a question the code answers and the vault does not (a zlib question beside UE
# notes), and of one the vault answers (its keywords far ahead of the tree's).
CODE_AHEAD = {"dense": {"vault": -0.5, "code": 1.3}, "lexical": {"vault": 0.5, "code": 1.4}}
VAULT_AHEAD = {"dense": {"vault": 1.6, "code": -0.2}, "lexical": {"vault": 2.7, "code": 0.5}}


def _decide(
    question: str, scores: dict, significant: dict | None = None, words: dict | None = None
) -> Routing:
    significant = significant or {"vault": False, "code": False}
    return decide(question, ORDER, scores["dense"], significant, scores["lexical"], NAMES, words)


def _shares(routing: Routing) -> dict[str, tuple[float, list[str]]]:
    return {c.name: (c.weight, list(c.reasons)) for c in routing.collections}


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("where is DBImpl::Write called", ["DBImpl::Write"]),
        ("deflate_slow 和 deflate_fast 的区别", ["deflate_slow", "deflate_fast"]),
        ("what does crc32.c compute", ["crc32.c"]),
        ("uncompress2", ["uncompress2"]),
        ("FindGreaterOrEqual in the SkipList", ["FindGreaterOrEqual", "SkipList"]),
        ("how do I compress a buffer", []),  # plain words name symbols too often
        ("Write the batch", []),
    ],
)
def test_identifiers_are_the_code_shaped_tokens(question: str, found: list[str]) -> None:
    assert identifiers(question) == found


def test_known_identifiers_match_a_symbol_a_qualified_tail_or_a_file() -> None:
    tokens = ["leveldb::DBImpl::Write", "DBImpl::Write", "crc32.c", "CRC32", "deflate_fast"]
    assert known_identifiers(tokens, NAMES["code"]) == [
        "leveldb::DBImpl::Write",  # its last part is a name the tree defines
        "DBImpl::Write",
        "crc32.c",
        "CRC32",  # (file stems match in any case)
    ]


def test_calibrated_evidence_against_the_vault_raises_the_source() -> None:
    weight, reasons = _shares(_decide("how is the longest match found", CODE_AHEAD))["code"]
    assert reasons == [
        "keywords beat the vault's (1.40)",
        "the vault has little on it",
        "asks how it works",
    ]
    assert weight == 8  # 3 × 3 × 2, at most 8
    significant = _decide("longest match", CODE_AHEAD, {"vault": False, "code": True})
    assert "meaning beats the vault's (1.30 sd)" in _shares(significant)["code"][1]


def test_a_notes_question_beside_a_tree_keeps_equal_weights() -> None:
    """Code words alone never route: a UE note question that says "function", "逻辑" or
    "是怎么" beside a tree that is not ahead on any score keeps the plain merge, the vault
    first."""
    for question in (
        "How do I expose a C++ function as a Blueprint node?",
        "Tick Group 里 TG_PrePhysics 各自适合放什么逻辑？",
        "客户端上能拿到 GameMode 吗？比分应该放在哪个类里？",  # 在哪个: not "where is it done"
        # how-it-works words: the tree has a little (BM25 scale .5), but is not ahead
        "KD 树和 BSP 树分别是怎么划分空间的？",
        "How does a binary space partitioning tree split a level?",
    ):
        assert _decide(question, VAULT_AHEAD).weights() == {"vault": 1, "code": 1}, question


def test_explicit_code_words_need_only_some_evidence_of_the_source() -> None:
    some = {"dense": {"vault": 1.6, "code": 0.2}, "lexical": {"vault": 2.7, "code": 0.6}}
    assert _shares(_decide("the source code of the block writer", some))["code"] == (
        2,
        ["code words"],
    )
    none = {"dense": {"vault": 1.6, "code": -0.4}, "lexical": {"vault": 2.7, "code": 0.3}}
    assert _decide("the source code of the block writer", none).weights()["code"] == 1


def test_an_identifier_of_the_tree_raises_it_even_when_the_notes_match_better() -> None:
    weight, reasons = _shares(_decide("DBImpl::Write 的 group commit", VAULT_AHEAD))["code"]
    assert reasons == ["identifier DBImpl::Write"] and weight == 2


def test_note_words_raise_the_vault_unless_the_code_is_asked_for_too() -> None:
    notes = _decide("what did I write in my notes about compaction", VAULT_AHEAD)
    assert _shares(notes)["vault"] == (2, ["note words"])
    both = _decide("我笔记里记过的限流，代码里怎么判断", VAULT_AHEAD)
    assert _shares(both)["vault"] == (1, [])  # its best note comes early either way


# A zh question about a zlib tree beside Chinese notes: neither side has calibrated evidence
# (the notes match its Chinese words), but its one Latin word is the tree's alone.
NEITHER = {"dense": {"vault": -0.95, "code": -0.83}, "lexical": {"vault": 0.52, "code": 0.22}}


def test_words_only_the_source_knows_raise_it() -> None:
    question = "怎么对一个大的 gzip 文件做随机访问？"
    assert vocabulary_words(tokenize(question)) == ["gzip"]  # the Chinese words are not compared
    words = {"vault": frozenset(), "code": frozenset({"gzip"})}
    assert _shares(_decide(question, NEITHER, words=words))["code"] == (
        3,
        ["words only it has: gzip"],
    )
    assert _decide(question, NEITHER).weights()["code"] == 1  # no vocabularies: no evidence


def test_one_word_among_many_shared_is_not_enough() -> None:
    shared = frozenset({"return", "bases", "formula", "leave"})
    question = "What does if() return in a Bases formula when I leave out the branch?"
    one = {"vault": shared, "code": shared | {"branch"}}
    assert _decide(question, NEITHER, words=one).weights()["code"] == 1
    two = {"vault": shared, "code": shared | {"branch", "inflate"}}
    assert (
        "words only it has: branch, inflate"
        in _shares(_decide(question, NEITHER, words=two))["code"][1]
    )


def test_words_the_vault_knows_and_the_source_lacks_keep_the_plain_merge() -> None:
    words = {"vault": frozenset({"packet"}), "code": frozenset({"slow", "dropping"})}
    routing = _decide("slow game, dropping packet", NEITHER, words=words)
    assert routing.weights() == {"vault": 1, "code": 1}


def test_words_say_nothing_when_the_notes_are_asked_for() -> None:
    """A small vault may lack "note" or "error": "the note where I explain the error" asks
    for the notes, whatever words they lack."""
    words = {"vault": frozenset(), "code": frozenset({"footer", "error"})}
    routing = _decide("the note where I explain the footer error", NEITHER, words=words)
    assert not any("words only" in r for c in routing.collections for r in c.reasons)
    # a vault too small to compare (no vocabulary given) says nothing either
    assert _decide("gzip", NEITHER, words={"code": frozenset({"gzip"})}).weights()["code"] == 1


def _result(chunk: str) -> SearchResult:
    return SearchResult(
        note_path=f"{chunk}.md", heading_path="", anchor="", chunk_id=chunk, score=0.0,
        text="", origin=f"{chunk}.md", line_start=1, line_end=1,
    )  # fmt: skip


def test_the_weighted_merge_shares_the_places_by_weight() -> None:
    lists = {
        "vault": [_result(f"n{i}") for i in range(1, 5)],
        "code": [_result(f"c{i}") for i in range(1, 5)],
    }
    ids = lambda weights, k=6: [r.chunk_id for r in merge_weighted(lists, weights, k)]  # noqa: E731
    assert ids({}) == ["n1", "c1", "n2", "c2", "n3", "c3"]  # rank by rank, the vault first
    assert ids({"vault": 1, "code": 2}) == ["c1", "c2", "n1", "c3", "c4", "n2"]
    assert ids({"vault": 2, "code": 1}) == ["n1", "n2", "c1", "n3", "n4", "c2"]
    assert ids({"vault": 1, "code": 8}, 5) == ["c1", "c2", "c3", "c4", "n1"]  # all it has
    assert ids({"vault": 1, "code": 2}, 2) == ["c1", "c2"]


def test_the_decision_reads_as_one_line_and_as_json() -> None:
    routing = _decide("where is DBImpl::Write", CODE_AHEAD)
    data = routing.to_dict()
    assert data["searched"] == ["vault", "code"]
    assert data["collections"][0] == {
        "name": "vault", "weight": 1.0, "reasons": [], "dense_key": -0.5, "lexical_key": 0.5,
    }  # fmt: skip
    assert routing.line() == routing_line(data)
    assert routing.line().startswith("searched: vault ×1, code ×8 (keywords beat the vault's")


def test_a_vault_too_small_to_calibrate_is_unknown_not_weak() -> None:
    """Under 20 passages BM25 gives the vault no key: "the vault has little on it" needs both
    of its calibrated keys (a tiny vault beside a tree is not thereby routed away from)."""
    small = {"dense": CODE_AHEAD["dense"], "lexical": {"code": 1.4}}
    reasons = _shares(_decide("longest match", small))["code"][1]
    assert reasons == ["keywords beat the vault's (1.40)"]
