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
