"""Asking about a note (retrieval/focus.py): the focused note's passages join the candidates and
scale by a bounded factor, its linked notes' by half of it; real manifest, real embedded Chroma
and BM25 over a small vault, with the hash embedder (texts sharing words get similar vectors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_rag.chunking.types import Chunk
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.focus import (
    MAX_FOCUS_WEIGHT,
    NoteFocus,
    focus_factors,
    note_focus,
)
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search

NOTES = {
    "Lumen.md": "# Lumen\n\nLumen bounces light between surfaces with screen traces. "
    "Shadows come from [[Shadows]].\n",
    "Shadows.md": "# Shadows\n\nVirtual shadow maps cast sharp light shadows.\n",
    "Setup.md": "# Setup\n\nTurn [[Lumen]] on in the project settings before you light a level.\n",
    "Overview.md": "# Global illumination\n\nGlobal illumination: light bounces between "
    "surfaces, global illumination bounces light again and again.\n",
    "Cooking.md": "# Pasta\n\nBoil the pasta for ten minutes in salted water, then drain it.\n",
}
QUESTION = "global illumination light bounces between surfaces"
# Enough other notes that a whole-vault search (50 candidates per side) can miss one.
RECIPES = {
    f"Recipes/Recipe {n}.md": f"# Recipe {n}\n\nBoil the pasta {n} minutes in salted water, "
    f"then drain it and add sauce number {n}.\n"
    for n in range(60)
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> VaultIndex:
    vault = tmp_path_factory.mktemp("vault")
    for rel, text in {**NOTES, **RECIPES}.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    index = VaultIndex(vault, tmp_path_factory.mktemp("data"), HashProvider())
    Indexer(index).run()
    return index


def _chunk(note: str, origin: str | None = None) -> Chunk:
    return Chunk(
        id=f"{note}:{origin}",
        note_path=note,
        text="t",
        embed_text="t",
        content_hash=note,
        hierarchy_path="",
        anchor="",
        line_start=1,
        line_end=1,
        has_code=False,
        size=1,
        title=note,
        origin=origin or note,
    )


def test_factors_are_bounded_and_halved_for_linked_notes() -> None:
    focus = NoteFocus(path="A.md", linked=frozenset({"B.md"}), weight=0.3)
    chunks = {
        c.id: c for c in (_chunk("A.md"), _chunk("B.md"), _chunk("C.md"), _chunk("E.md", "A.md"))
    }
    assert focus_factors(chunks, focus) == {
        "A.md:None": pytest.approx(1.3),
        "B.md:None": pytest.approx(1.15),
        "C.md:None": 1.0,
        "E.md:A.md": pytest.approx(1.3),  # A's text shown in E through an embed
    }
    assert focus.notes == ["A.md", "B.md"]
    for bad in (-0.1, MAX_FOCUS_WEIGHT + 0.01):
        with pytest.raises(ValueError, match="focus weight"):
            NoteFocus(path="A.md", weight=bad)


def test_linked_notes_are_its_own_links_plus_the_known_ones_it_is_told(index: VaultIndex) -> None:
    assert note_focus(index, "Lumen.md").linked == {"Shadows.md"}
    given = note_focus(index, "Lumen.md", ["Setup.md", "Missing.md", "Lumen.md"])
    assert given.linked == {"Shadows.md", "Setup.md"}  # unknown notes and itself are dropped
    assert note_focus(index, "Nowhere.md", ["Setup.md"]).linked == {"Setup.md"}
    assert note_focus(index, "Lumen.md", weight=0.1).weight == 0.1


def test_the_focused_note_rises_to_the_top(index: VaultIndex) -> None:
    # The link signal off: Setup's link to Lumen would lift Lumen on its own
    # (retrieval/link_signal.py); this test is about the focus alone.
    plain = hybrid_search(index, QUESTION, SearchOptions(k=5, link_weight=0.0))
    assert plain[0].note_path == "Overview.md"  # the whole-vault best match, without a focus
    focus = note_focus(index, "Lumen.md", ["Setup.md"], weight=0.3)
    focused = hybrid_search(index, QUESTION, SearchOptions(k=20, focus=focus, link_weight=0.0))
    assert focused[0].note_path == "Lumen.md"
    assert focused[0].dense_score is not None  # its cosine is reported like any dense hit
    # score = fused × feedback prior × focus factor, the factor one of 1, 1 + w/2, 1 + w
    ratios = {
        r.note_path: round(r.score / (r.base_score * r.prior), 3) for r in focused if r.base_score
    }
    assert ratios["Lumen.md"] == 1.3
    assert ratios["Setup.md"] == ratios["Shadows.md"] == 1.15
    others = set(ratios) - {"Lumen.md", "Setup.md", "Shadows.md"}
    assert others and all(ratios[p] == 1.0 for p in others)
    assert all(r.prior == 1.0 for r in focused)  # the feedback prior's own factor is untouched


def test_the_focused_note_competes_even_when_the_query_misses_it(index: VaultIndex) -> None:
    question = "boil pasta in salted water"
    plain = hybrid_search(index, question, SearchOptions(k=10))
    assert "Lumen.md" not in {r.note_path for r in plain}
    focus = note_focus(index, "Lumen.md")
    focused = hybrid_search(index, question, SearchOptions(k=10, focus=focus))
    paths = [r.note_path for r in focused]
    assert "Lumen.md" in paths  # its own candidate list: the query's nearest passages in it
    # A bounded boost: the clearly better passages stay ahead of it.
    assert paths[0] == plain[0].note_path and paths.index("Lumen.md") > 0


def test_a_focus_honours_the_folder_filter(tmp_path: Path, index: VaultIndex) -> None:
    focus = note_focus(index, "Lumen.md")
    results = hybrid_search(index, QUESTION, SearchOptions(k=5, folder="Nowhere", focus=focus))
    assert results == []
