"""PDFs as a source kind, on real PDFs the suite writes itself (`pdf_fixtures.py`): units stay
on their page and carry it, headings come from the outline or numbered lines, CJK text is
searchable, a paragraph running over a page break is one unit, and every bad PDF (encrypted,
truncated, not a PDF, image-only, over a limit) is a warning while every other file is indexed.
Indexing is real (manifest, BM25, embedded Chroma) with the hash stand-in embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from pdf_fixtures import write_image_only_pdf, write_pdf, write_truncated_pdf
from vault_rag.chunking.pipeline import chunk_options
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.status import index_status
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.settings import Settings
from vault_rag.sources.pdf import PdfKind
from vault_rag.sources.registry import source_registry
from vault_rag.vault.links import NoteIndex

QUOKKA = "Quokkas live on Rottnest Island and are famous for their friendly smiles."
WOMBAT = "Wombats dig long burrows with their strong claws and produce cube-shaped droppings."
GRAPH = (
    "The graph view draws every note as a dot and every link as a line between the dots, "
    "and the local graph shows only the notes around the active note"
)
CJK = "蓝图是虚幻引擎的可视化脚本系统，开发者用节点和连线来编写游戏逻辑而不写代码。"


def _units(path: Path, rel: str, kind: PdfKind | None = None):
    options = chunk_options(None, HashProvider())
    return (kind or PdfKind()).units(path, rel, NoteIndex([]), options)


def test_units_carry_their_page_and_the_outline_heading(tmp_path: Path) -> None:
    write_pdf(
        tmp_path / "animals.pdf",
        [("Marsupials", [QUOKKA]), (None, [WOMBAT]), ("Scripting", [CJK])],
    )
    result = _units(tmp_path, "animals.pdf")
    assert not result.warnings
    by_page = {c.extra["page"]: c for c in result.chunks}
    assert set(by_page) == {1, 2, 3}
    for page, chunk in by_page.items():
        assert chunk.extra["kind"] == "pdf"
        assert chunk.extra["page_end"] == page
        assert chunk.anchor == f"page={page}"
        assert (chunk.line_start, chunk.line_end) == (page, page)
    assert "Rottnest Island" in by_page[1].text
    assert by_page[1].hierarchy_path == "Marsupials"
    assert by_page[2].hierarchy_path == "Marsupials"  # the outline entry is still in force
    assert by_page[3].hierarchy_path == "Scripting"
    assert "可视化脚本系统" in by_page[3].text.replace("\n", "")
    assert by_page[1].embed_text.startswith("# animals\n## Marsupials\n\n")


def test_numbered_headings_without_an_outline(tmp_path: Path) -> None:
    write_pdf(tmp_path / "m.pdf", [(None, ["1 Animals", QUOKKA, "1.2 Diggers", WOMBAT])])
    chunks = _units(tmp_path, "m.pdf").chunks
    assert [c.hierarchy_path for c in chunks] == ["1 Animals", "1 Animals > 1.2 Diggers"]


def test_a_paragraph_running_over_a_page_break_is_one_unit(tmp_path: Path) -> None:
    # Page 1 ends mid-sentence (no full stop), page 2 goes on with the same sentence.
    write_pdf(tmp_path / "run.pdf", [(None, [QUOKKA, GRAPH]), (None, ["of the graph.", WOMBAT])])
    chunks = _units(tmp_path, "run.pdf").chunks
    spanning = [c for c in chunks if c.extra["page_end"] != c.extra["page"]]
    assert len(spanning) == 1
    assert spanning[0].extra == {**spanning[0].extra, "page": 1, "page_end": 2}
    assert "around the active note of the graph." in spanning[0].text
    assert all("Wombats" not in c.text or c.extra["page"] == 2 for c in chunks)


def test_long_pages_are_cut_into_units_that_stay_on_the_page(tmp_path: Path) -> None:
    write_pdf(tmp_path / "long.pdf", [(None, [QUOKKA] * 12), (None, [WOMBAT] * 12)])
    chunks = _units(tmp_path, "long.pdf").chunks
    assert len(chunks) > 2
    assert all(c.extra["page"] == c.extra["page_end"] for c in chunks)
    assert len({c.id for c in chunks}) == len(chunks)


@pytest.fixture
def mixed_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "Papers").mkdir(parents=True)
    (vault / "Note.md").write_text("# Note\n\nA note about echidnas and platypuses.\n")
    good = write_pdf(
        vault / "Papers/Animals.pdf", [("Marsupials", [QUOKKA]), ("Diggers", [WOMBAT, CJK])]
    )
    write_pdf(vault / "Papers/Locked.pdf", [(None, [QUOKKA])], password="secret")
    write_truncated_pdf(vault / "Papers/Cut.pdf", good)
    write_image_only_pdf(vault / "Papers/Scan.pdf")
    (vault / "Papers/Fake.pdf").write_bytes(b"This is a text file named .pdf\n")
    write_pdf(vault / "Papers/Long.pdf", [(None, [f"Page {n}."]) for n in range(1, 6)])
    return vault


def test_bad_pdfs_are_warnings_and_everything_else_is_indexed(
    tmp_path: Path, mixed_vault: Path
) -> None:
    settings = Settings.model_construct(max_pdf_pages=4)
    index = VaultIndex(mixed_vault, tmp_path / "data", HashProvider())
    try:
        summary = Indexer(index, sources=source_registry(settings)).run()
        assert summary.chunks_pending == 0
        codes = {w["note"]: w["code"] for w in index.manifest.warnings()}
        assert codes == {
            "Papers/Locked.pdf": "encrypted",
            "Papers/Cut.pdf": "damaged",
            "Papers/Fake.pdf": "damaged",
            "Papers/Scan.pdf": "no_text_layer",
            "Papers/Long.pdf": "too_many_pages",
        }
        status = index_status(tmp_path / "data")
        assert {w["code"] for w in status["warnings"]} >= {"no_text_layer", "encrypted"}
        assert any("no text layer" in w["message"] for w in status["warnings"])
        held = {c.note_path for c in index.manifest.chunks(index.manifest.chunk_ids()).values()}
        assert held == {"Note.md", "Papers/Animals.pdf"}
        hits = hybrid_search(index, "cube-shaped droppings burrows", SearchOptions(k=3))
        assert hits[0].note_path == "Papers/Animals.pdf"
        assert (hits[0].kind, hits[0].page, hits[0].page_end) == ("pdf", 2, 2)
        assert hits[0].anchor == "page=2"
        assert hits[0].to_dict()["page"] == 2
        cjk = hybrid_search(index, "可视化脚本", SearchOptions(k=3))
        assert cjk[0].note_path == "Papers/Animals.pdf" and cjk[0].page == 2
        md = hybrid_search(index, "echidnas platypuses", SearchOptions(k=1))[0]
        assert (md.kind, md.page, md.page_end) == ("md", None, None)
    finally:
        index.close()


def test_pdfs_are_updated_and_deleted_incrementally(tmp_path: Path, mixed_vault: Path) -> None:
    index = VaultIndex(mixed_vault, tmp_path / "data", HashProvider())
    try:
        Indexer(index).run()
        again = Indexer(index).run()
        assert again.notes_changed == 0 and again.chunks_embedded == 0
        write_pdf(mixed_vault / "Papers/Animals.pdf", [(None, [WOMBAT])])
        changed = Indexer(index).run()
        assert changed.notes_changed == 1
        texts = [c.text for c in index.manifest.note_chunks("Papers/Animals.pdf")]
        assert texts and not any("Rottnest" in t for t in texts)
        (mixed_vault / "Papers/Animals.pdf").unlink()
        (mixed_vault / "Papers/Locked.pdf").unlink()
        gone = Indexer(index).run()
        assert gone.notes_deleted == 2
        assert not index.manifest.note_chunks("Papers/Animals.pdf")
        assert "Papers/Locked.pdf" not in {w["note"] for w in index.manifest.warnings()}
    finally:
        index.close()


def test_pdfs_are_left_out_when_the_kind_is_off(tmp_path: Path, mixed_vault: Path) -> None:
    index = VaultIndex(mixed_vault, tmp_path / "data", HashProvider())
    try:
        only_md = source_registry(Settings.model_construct(index_kinds=["md"]))
        summary = Indexer(index, sources=only_md).run()
        assert summary.notes_seen == 1
        assert set(index.manifest.notes()) == {"Note.md"}
    finally:
        index.close()


def test_the_start_up_scan_follows_pdfs_and_canvases_moved_excluded_or_changed_while_down(
    tmp_path: Path, mixed_vault: Path
) -> None:
    """What the server's start-up scan (an `Indexer` run) finds after changes made while it was
    down: a PDF and a canvas moved keep their vectors (nothing embedded again), a PDF in an
    excluded folder leaves the index, and an edited canvas is read again."""
    import json

    from vault_rag.vault.exclusions import Exclusions

    board = {
        "nodes": [
            {"id": "t", "type": "text", "x": 0, "y": 0, "width": 9, "height": 9,
             "text": "Echidnas\nEchidnas lay eggs and eat ants."},
        ],
        "edges": [],
    }  # fmt: skip
    (mixed_vault / "Board.canvas").write_text(json.dumps(board), encoding="utf-8")
    index = VaultIndex(mixed_vault, tmp_path / "data", HashProvider())
    try:
        Indexer(index).run()
        assert {"Papers/Animals.pdf", "Board.canvas"} <= set(index.manifest.notes())
        (mixed_vault / "Moved").mkdir()
        (mixed_vault / "Papers/Animals.pdf").rename(mixed_vault / "Moved/Animals.pdf")
        (mixed_vault / "Board.canvas").rename(mixed_vault / "Moved/Board.canvas")
        moved = Indexer(index).run()
        assert moved.notes_renamed == 2 and moved.chunks_embedded == 0
        hits = hybrid_search(index, "cube-shaped droppings burrows", SearchOptions(k=3))
        assert (hits[0].note_path, hits[0].page) == ("Moved/Animals.pdf", 2)

        board["nodes"][0]["text"] = "Echidnas\nEchidnas have spines and no teeth."
        (mixed_vault / "Moved/Board.canvas").write_text(json.dumps(board), encoding="utf-8")
        private = Settings.model_construct(exclude=["Moved/Animals.pdf"])
        ignores = Exclusions.load(private, tmp_path / "data").ignores()
        excluded = Indexer(index, ignores=ignores).run()
        assert excluded.notes_changed == 1 and excluded.notes_deleted == 1
        assert index.manifest.note("Moved/Animals.pdf") is None
        texts = [c.text for c in index.manifest.note_chunks("Moved/Board.canvas")]
        assert any("spines" in t for t in texts) and not any("ants" in t for t in texts)
    finally:
        index.close()
