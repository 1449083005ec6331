"""The link signal (retrieval/link_signal.py): the best candidates lend part of their fused
score to the notes they link to — on hand-made candidates, and through `hybrid_search` on a
real index (manifest, embedded Chroma, BM25) of a small vault with an overview note."""

from __future__ import annotations

import pytest

from vault_rag.chunking.types import Chunk
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.retrieval.link_signal import LINK_TOP, add_link_signal, linked_targets
from vault_rag.vault.links import NoteIndex

NOTES = NoteIndex(["Overview.md", "Topics/Alpha.md", "Topics/Beta.md", "Gamma.md", "Delta.md"])


def _chunk(note: str, n: int, text: str, origin: str | None = None) -> Chunk:
    return Chunk(
        id=f"{note}#{n}",
        note_path=note,
        text=text,
        embed_text=text,
        content_hash=f"{note}{n}",
        hierarchy_path="",
        anchor="",
        line_start=1,
        line_end=1,
        has_code=False,
        size=len(text.split()),
        title=note,
        origin=origin or note,
    )


def test_a_top_candidate_lends_to_the_best_candidate_of_each_note_it_links_to() -> None:
    overview = _chunk("Overview.md", 0, "See [[Alpha]] and [Beta](Topics/Beta.md).")
    alpha_best, alpha_other = _chunk("Topics/Alpha.md", 0, "a"), _chunk("Topics/Alpha.md", 1, "b")
    beta = _chunk("Topics/Beta.md", 0, "c")
    chunks = {c.id: c for c in (overview, alpha_best, alpha_other, beta)}
    fused = {overview.id: 0.4, alpha_best.id: 0.1, alpha_other.id: 0.05, beta.id: 0.02}

    add_link_signal(fused, chunks, NOTES, weight=0.5)

    share = 0.5 * 0.4 / 2  # split over the two notes the passage links to
    assert fused[alpha_best.id] == pytest.approx(0.1 + share)
    assert fused[alpha_other.id] == pytest.approx(0.05)  # only the note's best candidate
    assert fused[beta.id] == pytest.approx(0.02 + share)
    assert fused[overview.id] == pytest.approx(0.4)  # the lender keeps its own score


def test_it_never_adds_a_candidate_and_a_note_takes_the_largest_share() -> None:
    one = _chunk("Overview.md", 0, "[[Alpha]]")
    two = _chunk("Gamma.md", 0, "[[Alpha]] [[Delta]] [[Overview]]")
    alpha = _chunk("Topics/Alpha.md", 0, "x")
    chunks = {c.id: c for c in (one, two, alpha)}
    fused = {one.id: 0.3, two.id: 0.6, alpha.id: 0.1}

    add_link_signal(fused, chunks, NOTES, weight=0.5)

    assert set(fused) == {one.id, two.id, alpha.id}  # Delta has no candidate: nothing added
    # Overview offers .5 × .3 = .15 alone; Gamma offers .5 × .6 / 3 = .1: the larger counts once
    assert fused[alpha.id] == pytest.approx(0.1 + 0.15)
    assert fused[one.id] == pytest.approx(0.3 + 0.1)  # Gamma links to Overview too


def test_only_the_top_candidates_lend_and_weight_zero_is_off() -> None:
    lenders = [_chunk("Gamma.md", i, "x") for i in range(LINK_TOP)]
    late = _chunk("Delta.md", 0, "[[Alpha]]")
    alpha = _chunk("Topics/Alpha.md", 0, "y")
    chunks = {c.id: c for c in (*lenders, late, alpha)}
    fused = {c.id: 1.0 for c in lenders} | {late.id: 0.5, alpha.id: 0.1}

    before = dict(fused)
    add_link_signal(fused, chunks, NOTES, weight=0.5)
    assert fused == before  # the linking passage ranks below the top LINK_TOP
    add_link_signal(fused, chunks, NOTES, weight=0.0)
    assert fused == before


def test_linked_targets_skip_code_own_note_and_origin_and_resolve_from_the_origin() -> None:
    text = "[[Alpha]] `x` [[Overview]] [[Missing]]\n```\n[[Beta]]\n```\n[[Gamma#Part|g]]"
    # text written in Gamma and shown in Overview through an embed: links resolve from Gamma
    embedded = _chunk("Overview.md", 0, text, origin="Gamma.md")
    assert linked_targets(embedded, NOTES) == {"Topics/Alpha.md"}
    # of two notes with one name, the one beside the note that wrote the link
    twins = NoteIndex(["A/Same.md", "B/Same.md", "B/Writer.md", "A/Shown.md"])
    shown = _chunk("A/Shown.md", 0, "[[Same]]", origin="B/Writer.md")
    assert linked_targets(shown, twins) == {"B/Same.md"}


VAULT = {
    # The overview's section on the topic matches the question; the note that answers it in
    # full is only linked from there.
    "Overview.md": "# Overview\n\n## Render passes\n\nThe render passes of a frame are "
    "described in [[Frame anatomy]]: geometry, lighting, translucency, post processing.\n",
    "Frame anatomy.md": "# Frame anatomy\n\nA frame goes through a depth prepass, then the base "
    "pass writes the GBuffer, deferred lighting reads it.\n",
    "Unrelated.md": "# Unrelated\n\nCooking pasta: salt the water, stir, taste.\n",
}


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory) -> VaultIndex:
    vault = tmp_path_factory.mktemp("vault")
    for name, text in VAULT.items():
        (vault / name).write_text(text, encoding="utf-8")
    index = VaultIndex(vault, tmp_path_factory.mktemp("data"), HashProvider())
    Indexer(index).run()
    yield index
    index.close()


def test_through_search_the_linked_note_rises_and_nothing_else_changes(
    small_index: VaultIndex,
) -> None:
    query = "render passes of a frame geometry lighting translucency"
    off = hybrid_search(small_index, query, SearchOptions(link_weight=0.0, per_note_cap=5))
    on = hybrid_search(small_index, query, SearchOptions(link_weight=1.0, per_note_cap=5))

    assert {r.chunk_id for r in on} == {r.chunk_id for r in off}
    gained = {r.note_path: r.base_score for r in on}
    had = {r.note_path: r.base_score for r in off}
    assert gained["Frame anatomy.md"] > had["Frame anatomy.md"]
    assert gained["Overview.md"] == had["Overview.md"]
    assert gained.get("Unrelated.md") == had.get("Unrelated.md")
