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
from vault_rag.retrieval.cite import MARGIN, SpanScorer, best_span, unit_spans
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
