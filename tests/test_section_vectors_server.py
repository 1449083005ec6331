"""The server's writer embeds the sections of merged units once the units are in: at start-up
and after a note is posted (`IndexWriter._embed_step` → `index/updates/sections.backfill`), on a
real uvicorn server with the wire-level fake embedding server (its vectors are random per text,
so which section a search cites is not checked here: `test_section_vectors.py` does that with
the hashing model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_server_helpers import LiveServer, wait_idle

GUIDE = """# Guide

## Setup

Create the project and open the editor.

### Network emulation

Simulate packet loss and latency in the editor preferences.

## Shipping

Package the build.
"""

SERVER_SETTINGS = {"server_watch": False}


def SERVER_VAULT(vault: Path) -> None:
    vault.mkdir(parents=True)
    (vault / "Guide.md").write_text(GUIDE, encoding="utf-8")
    (vault / "Other.md").write_text("# Other\n\nSomething about packages.\n", encoding="utf-8")


def _sections(live: LiveServer, note: str) -> list[int]:
    manifest = live.state.index.manifest
    hashes = [c.content_hash for c in manifest.note_chunks(note)]
    marks = ",".join("?" * len(hashes))
    rows = manifest.db.execute(
        f"SELECT sections FROM section_vectors WHERE content_hash IN ({marks})", hashes
    )
    return sorted(r[0] for r in rows)


def test_the_start_up_index_gets_its_sections(live: LiveServer) -> None:
    assert _sections(live, "Guide.md") == [4]
    assert _sections(live, "Other.md") == [0]


def test_a_posted_note_gets_its_sections_after_its_units(live: LiveServer, client: Any) -> None:
    note = GUIDE.replace("# Guide", "# Travel").replace("Shipping", "Packing")
    (Path(live.state.index.vault_root) / "Travel.md").write_text(note, encoding="utf-8")
    posted = client.put("/v1/notes", json={"notes": [{"path": "Travel.md", "content": note}]})
    assert posted.status_code == 200, posted.text
    wait_idle(live)
    assert _sections(live, "Travel.md") == [4]
