"""Citing the exact place (retrieval/cite.py): a merged unit is cut at its inner headings, the
section that holds the question's words is cited (heading path, anchor, lines, text), a note's
positions are re-filled with its best sections, and the note-level ranking never moves — on
hand-made results and through `hybrid_search` on a real index (manifest, Chroma, BM25)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.cite import MARGIN, Span, SpanScorer, _encloses, best_span, unit_spans
from vault_rag.retrieval.cite_cache import NoteUnit, cache_for
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult, hybrid_search

UNIT = """## Setup

Create the project and open the editor.

### Network emulation

Simulate packet loss and latency in the editor preferences.
```cpp
# not a heading: a preprocessor line in a code block
```

## Shipping

Package the build."""


def _result(text: str = UNIT, start: int = 10, origin: str = "Guide.md") -> SearchResult:
    lines = text.count("\n") + 1
    return SearchResult(
        note_path="Guide.md",
        heading_path="Guide > Setup",
        anchor="Setup",
        chunk_id="c1",
        score=1.0,
        text=text,
        origin=origin,
        line_start=start,
        line_end=start + lines - 1,
    )


def test_a_merged_unit_is_cut_at_its_headings_outside_code_fences() -> None:
    spans = unit_spans(_result(), {})
    assert [s.heading_path for s in spans] == [
        "Guide > Setup",
        "Guide > Setup > Network emulation",
        "Guide > Shipping",
    ]
    assert [s.anchor for s in spans] == ["Setup", "Network emulation", "Shipping"]
    assert [(s.line_start, s.line_end) for s in spans] == [(10, 12), (14, 19), (21, 23)]
    assert spans[1].text.startswith("### Network emulation") and "preprocessor" in spans[1].text
    assert [s.first for s in spans] == [True, False, False]


def test_the_note_s_own_heading_paths_are_used_when_known() -> None:
    spans = unit_spans(_result(), {"Shipping": "Guide > Release > Shipping"})
    assert spans[2].heading_path == "Guide > Release > Shipping"


def test_text_shown_through_an_embed_keeps_the_unit_citation() -> None:
    embedded = _result(origin="Other.md")
    assert [s.first for s in unit_spans(embedded, {})] == [True]
    squeezed = replace(_result(), line_end=11)  # lines do not map one to one
    assert len(unit_spans(squeezed, {})) == 1


def test_the_best_span_must_beat_the_first_section_by_a_margin() -> None:
    spans = unit_spans(_result(), {})
    idf = {"packet": 2.0, "loss": 2.0, "latency": 2.0, "editor": 0.5}
    span, value = best_span(spans, SpanScorer("packet loss and latency", idf))
    assert span.anchor == "Network emulation" and value > MARGIN
    span, _ = best_span(spans, SpanScorer("editor", idf))  # both sections say "editor"
    assert span.first


VAULT = {
    "Guide.md": "# Guide\n\n" + UNIT + "\n",
    "Other.md": "# Other\n\nSomething about the editor and packages.\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> VaultIndex:
    root = tmp_path_factory.mktemp("cite")
    vault = root / "vault"
    vault.mkdir()
    for name, text in VAULT.items():
        (vault / name).write_text(text, encoding="utf-8")
    built = VaultIndex(vault, root / "data", HashProvider())
    Indexer(built).run()
    yield built
    built.close()


def test_search_cites_the_section_that_answers(index: VaultIndex) -> None:
    query = "simulate packet loss latency"
    plain = hybrid_search(index, query, SearchOptions(cite_spans=False))
    located = hybrid_search(index, query, SearchOptions(cite_spans=True))
    assert plain[0].note_path == located[0].note_path == "Guide.md"
    assert plain[0].anchor == "Setup"  # the merged unit cites its first section
    top = located[0]
    assert top.anchor == "Network emulation"
    assert top.heading_path.endswith("Network emulation")
    lines = (Path(index.vault_root) / "Guide.md").read_text("utf-8").split("\n")
    assert lines[top.line_start - 1] == "### Network emulation"
    assert "packet loss" in "\n".join(lines[top.line_start - 1 : top.line_end])
    assert top.text.startswith("### Network emulation") and "Package the build" not in top.text
    assert top.context == plain[0].context  # the enclosing section is still shown


def test_note_ranking_is_the_searchs_whatever_the_citation(hashed_index) -> None:
    for query in ("Tick Group 物理", "how to replicate a property", "材质参数 动态", "GC 指针"):
        plain = hybrid_search(hashed_index, query, SearchOptions(cite_spans=False))
        located = hybrid_search(hashed_index, query, SearchOptions(cite_spans=True))
        assert list(dict.fromkeys(r.note_path for r in plain)) == list(
            dict.fromkeys(r.note_path for r in located)
        )
        assert [r.note_path for r in plain] == [r.note_path for r in located]


def test_the_note_cache_follows_an_edit_of_the_note(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in VAULT.items():
        (vault / name).write_text(text, encoding="utf-8")
    built = VaultIndex(vault, tmp_path / "data", HashProvider())
    try:
        Indexer(built).run()
        query = "simulate packet loss latency"
        first = hybrid_search(built, query, SearchOptions(cite_spans=True))[0]
        assert first.anchor == "Network emulation"
        before = cache_for(built).entry("Guide.md")
        assert cache_for(built).entry("Guide.md") is before  # kept between searches
        # two lines above the section: its cited lines move, and the cache must see it
        (vault / "Guide.md").write_text("# Guide\n\nIntro.\n\n" + UNIT + "\n", encoding="utf-8")
        Indexer(built).run()
        assert cache_for(built).entry("Guide.md") is not before
        moved = hybrid_search(built, query, SearchOptions(cite_spans=True))[0]
        assert moved.anchor == "Network emulation"
        assert moved.line_start == first.line_start + 2
        lines = (vault / "Guide.md").read_text("utf-8").split("\n")
        assert lines[moved.line_start - 1] == "### Network emulation"
    finally:
        built.close()


def test_headings_are_named_as_obsidian_shows_them_and_nest_by_level() -> None:
    code = "### `daily:read`\n\nRead it.\n\n### `daily:append`\n\nAppend to it."
    result = replace(_result(code), heading_path="Daily notes > daily:read", anchor="daily:read")
    spans = unit_spans(result, {})
    assert [s.heading_path for s in spans] == [
        "Daily notes > daily:read",
        "Daily notes > daily:append",
    ]
    assert spans[1].anchor == "daily:append"
    # the chunker names a unit after its first subsection when the heading it opens with has
    # no text of its own: that heading is the parent, not a second copy of it
    opening = "## Examples\n\n### Deadline\n\nOne.\n\n### Overdue\n\nTwo."
    result = replace(_result(opening), heading_path="Examples > Deadline", anchor="Deadline")
    spans = unit_spans(result, {})
    assert [s.heading_path for s in spans] == [
        "Examples",
        "Examples > Deadline",
        "Examples > Overdue",
    ]
    assert [s.first for s in spans] == [True, False, False]


def test_an_overview_is_a_section_enclosing_another_candidate() -> None:
    intro = Span("Guide", "", "", 1, 3, "text", True)
    setup = Span("Guide > Setup", "Setup", "Setup", 5, 9, "text", True)
    assert _encloses(intro, ["Guide", "Guide > Setup"])
    assert _encloses(setup, ["Guide > Setup", "Guide > Setup > Network emulation"])
    assert not _encloses(setup, ["Guide > Setup", "Guide > Shipping", "Guide > Setupx"])


def test_a_section_closer_in_meaning_wins_when_the_words_tie() -> None:
    scorer = SpanScorer("editor", {"editor": 1.0})
    unit = NoteUnit(
        chunk=None,  # type: ignore[arg-type]  (best() reads only the spans and their text)
        spans=tuple(unit_spans(_result(), {})),
        folded=("the editor", "the editor", "the editor"),
        titles=("", "", ""),
    )
    assert scorer.best(unit)[0].first  # a tie keeps the unit's own first section
    # a gap in cosine worth more than the margin moves the citation; a smaller one does not
    assert scorer.best(unit, [0.0, MARGIN + 0.05, 0.0])[0].anchor == "Network emulation"
    assert scorer.best(unit, [0.0, MARGIN - 0.05, 0.0])[0].first
    assert scorer.best(unit, [0.3, 0.3 + MARGIN + 0.05, 0.3])[0].anchor == "Network emulation"
