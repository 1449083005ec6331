"""`POST /v1/notes/changed` on a real server (watcher off, so only the route can bring the
change in): the plugin names a PDF that changed, the sidecar reads it from the vault and
`/v1/search` cites its page; a deleted PDF leaves; a kind not indexed is `ignored`."""

from __future__ import annotations

from pathlib import Path

from pdf_fixtures import write_pdf
from test_server_helpers import wait_until

SERVER_SETTINGS = {"server_watch": False}
PAGE_2 = "Axolotls regrow lost limbs and keep their larval gills for their whole lives."


def SERVER_VAULT(vault: Path) -> None:
    vault.mkdir(parents=True)
    (vault / "Note.md").write_text("# Note\n\nSomething about otters.\n", encoding="utf-8")


def test_a_changed_pdf_is_read_from_the_vault_and_cited_to_its_page(live, client) -> None:
    vault = Path(live.state.index.vault_root)
    write_pdf(vault / "Field guide.pdf", [(None, ["Otters hold hands."]), ("Amphibians", [PAGE_2])])
    (vault / "notes.txt").write_text("not indexed")
    answer = client.post(
        "/v1/notes/changed", json={"paths": ["Field guide.pdf", "notes.txt", "Note.md"]}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [r["status"] for r in body["results"]] == ["indexed", "ignored", "unchanged"]
    assert body["indexed"] == 1

    def first_hit() -> dict | None:
        hits = client.post("/v1/search", json={"query": "axolotls regrow limbs gills"}).json()
        top = hits["results"][0]
        return top if top["note_path"] == "Field guide.pdf" else None

    top = wait_until(first_hit, timeout=20)  # (the BM25 side answers once its state is read)
    assert (top["kind"], top["page"], top["page_end"], top["anchor"]) == ("pdf", 2, 2, "page=2")
    assert top["heading_path"] == "Amphibians"
    # The plugin deletes what its reconcile finds in the hashes but not among its Markdown
    # files: PDFs are not listed there.
    hashes = client.get("/v1/notes/hashes").json()["hashes"]
    assert "Note.md" in hashes and "Field guide.pdf" not in hashes

    (vault / "Field guide.pdf").unlink()
    gone = client.post("/v1/notes/changed", json={"paths": ["Field guide.pdf"]}).json()
    assert gone["results"] == [{"path": "Field guide.pdf", "status": "deleted"}]
    after = client.post("/v1/search", json={"query": "axolotls regrow limbs gills"}).json()
    assert all(r["note_path"] != "Field guide.pdf" for r in after["results"])


BOARD = {
    "nodes": [
        {"id": "g", "type": "group", "x": 0, "y": 0, "width": 500, "height": 300, "label": "Pond"},
        {"id": "t", "type": "text", "x": 10, "y": 10, "width": 200, "height": 100,
         "text": "Newts\nNewts lay their eggs one by one on water plants."},
    ],
    "edges": [],
}  # fmt: skip


def test_a_renamed_pdf_a_canvas_and_an_excluded_folder(live, client) -> None:
    """What the plugin sends (issue 25): a rename as both paths (the old one is gone, the new one
    is read), a canvas by its path; a file under an excluded folder is left out."""
    import json

    vault = Path(live.state.index.vault_root)
    write_pdf(
        vault / "Inbox.pdf", [("Salamanders", ["Fire salamanders carry bright warning colours."])]
    )
    assert client.post("/v1/notes/changed", json={"paths": ["Inbox.pdf"]}).json()["indexed"] == 1
    (vault / "Papers").mkdir()
    (vault / "Inbox.pdf").rename(vault / "Papers" / "Salamanders.pdf")
    moved = client.post(
        "/v1/notes/changed", json={"paths": ["Inbox.pdf", "Papers/Salamanders.pdf"]}
    )
    assert [r["status"] for r in moved.json()["results"]] == ["deleted", "indexed"]
    notes = live.state.index.manifest.notes()
    assert "Inbox.pdf" not in notes and "Papers/Salamanders.pdf" in notes

    (vault / "Pond.canvas").write_text(json.dumps(BOARD), encoding="utf-8")
    board = client.post("/v1/notes/changed", json={"paths": ["Pond.canvas"]}).json()
    assert board["results"] == [{"path": "Pond.canvas", "status": "indexed"}]
    units = live.state.index.manifest.note_chunks("Pond.canvas")
    assert [u.hierarchy_path for u in units] == ["Pond > Newts"]

    excluded = client.put("/v1/settings/exclude", json={"exclude": ["Private"]})
    assert excluded.status_code == 200, excluded.text
    (vault / "Private").mkdir()
    write_pdf(vault / "Private" / "Diary.pdf", [(None, ["Private thoughts about newts."])])
    hidden = client.post("/v1/notes/changed", json={"paths": ["Private/Diary.pdf"]}).json()
    assert hidden["results"] == [{"path": "Private/Diary.pdf", "status": "ignored"}]
    assert live.state.index.manifest.note("Private/Diary.pdf") is None
