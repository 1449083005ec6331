"""Canvases (JSON Canvas 1.0) as a source kind: text cards are units labelled by their group
(nested groups give a path) and first line; file cards joined by edges become links in the
card's unit, loose file cards one unit of links; the related view follows them; a malformed
board is a `bad_canvas` warning while every other file is indexed."""

from __future__ import annotations

import json
from pathlib import Path

from vault_rag.chunking.pipeline import chunk_options
from vault_rag.embeddings.hashing import HashProvider
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.retrieval.related import linked_notes
from vault_rag.sources.canvas import CanvasKind
from vault_rag.vault.links import NoteIndex

BOARD = {
    "nodes": [
        {
            "id": "g1",
            "type": "group",
            "x": 0,
            "y": 0,
            "width": 1000,
            "height": 800,
            "label": "Rendering",
        },
        {
            "id": "g2",
            "type": "group",
            "x": 20,
            "y": 300,
            "width": 500,
            "height": 400,
            "label": "Lighting",
        },
        {
            "id": "t1",
            "type": "text",
            "x": 40,
            "y": 40,
            "width": 300,
            "height": 100,
            "text": "# Nanite\nVirtualized geometry streams only the triangles you can see.",
        },
        {
            "id": "t2",
            "type": "text",
            "x": 40,
            "y": 340,
            "width": 300,
            "height": 100,
            "text": "Lumen bounces light off walls for global illumination.",
        },
        {
            "id": "f1",
            "type": "file",
            "x": 600,
            "y": 40,
            "width": 200,
            "height": 100,
            "file": "Notes/Meshes.md",
        },
        {
            "id": "f2",
            "type": "file",
            "x": 600,
            "y": 400,
            "width": 200,
            "height": 100,
            "file": "Notes/Shadows.md",
        },
        {
            "id": "l1",
            "type": "link",
            "x": 1200,
            "y": 0,
            "width": 100,
            "height": 100,
            "url": "https://example.org",
        },
        {
            "id": "t3",
            "type": "text",
            "x": 1200,
            "y": 900,
            "width": 100,
            "height": 100,
            "text": "Loose card outside every group",
        },
    ],
    "edges": [{"id": "e1", "fromNode": "t1", "toNode": "f1", "toEnd": "arrow"}],
}


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes/Meshes.md").write_text("# Meshes\n\nStatic meshes and LODs.\n")
    (vault / "Notes/Shadows.md").write_text("# Shadows\n\nShadow maps and ray tracing.\n")
    (vault / "Board.canvas").write_text(json.dumps(BOARD), encoding="utf-8")
    (vault / "Broken.canvas").write_text('{"nodes": [ {"id": ', encoding="utf-8")
    (vault / "Wrong.canvas").write_text('["a list, not a board"]', encoding="utf-8")
    return vault


def test_text_cards_are_units_labelled_by_group_and_first_line(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    notes = NoteIndex(["Notes/Meshes.md", "Notes/Shadows.md"])
    result = CanvasKind().units(vault, "Board.canvas", notes, chunk_options(None, HashProvider()))
    assert not result.warnings
    labels = [c.hierarchy_path for c in result.chunks]
    assert labels == [
        "Rendering > Nanite",
        "Rendering > Lighting > Lumen bounces light off walls for global illumination.",
        "Loose card outside every group",
        "Rendering > Files",
    ]
    nanite = result.chunks[0]
    assert nanite.text.endswith("→ [[Notes/Meshes.md]]")
    assert nanite.extra["kind"] == "canvas" and nanite.anchor == ""
    assert result.chunks[3].text == "[[Notes/Shadows.md]]"  # the file card no text card joins
    assert linked_notes(result.chunks, "Board.canvas", notes) == {
        "Notes/Meshes.md",
        "Notes/Shadows.md",
    }


def test_a_vault_with_boards_indexes_and_warns(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    index = VaultIndex(vault, tmp_path / "data", HashProvider())
    try:
        Indexer(index).run()
        codes = {w["note"]: w["code"] for w in index.manifest.warnings()}
        assert codes == {"Broken.canvas": "bad_canvas", "Wrong.canvas": "bad_canvas"}
        assert {"Notes/Meshes.md", "Notes/Shadows.md", "Board.canvas"} <= set(
            index.manifest.notes()
        )
        hit = hybrid_search(index, "virtualized geometry triangles", SearchOptions(k=3))[0]
        assert (hit.note_path, hit.kind, hit.heading_path) == (
            "Board.canvas",
            "canvas",
            "Rendering > Nanite",
        )
        (vault / "Board.canvas").unlink()
        assert Indexer(index).run().notes_deleted == 1
        assert not index.manifest.note_chunks("Board.canvas")
    finally:
        index.close()
