"""Issue 31 (also fix): `/v1/status?path=` for a note embedding one missing note 100,000 times
answered 12 MB of identical warnings. Repeats are grouped: one entry per code, message and
target, at its first line, with a `count`. A real server indexing the note from disk."""

from __future__ import annotations

from pathlib import Path

from test_server_helpers import LiveServer

REPEATS = 20_000
NOTE = "Embeds everything.md"


def SERVER_VAULT(vault: Path) -> None:
    vault.mkdir(parents=True)
    (vault / "Other.md").write_text("# Other\n\nSome text.\n", encoding="utf-8")
    lines = ["# Many embeds", ""] + ["![[Nowhere]]"] * REPEATS + ["", "![[Also gone]]"]
    (vault / NOTE).write_text("\n".join(lines) + "\n", encoding="utf-8")


SERVER_SETTINGS = {"server_watch": False}


def test_repeated_warnings_are_one_entry_with_a_count(live: LiveServer) -> None:
    with live.client() as client:
        response = client.get("/v1/status", params={"path": NOTE})
    assert response.status_code == 200, response.text
    assert len(response.content) < 20_000, len(response.content)
    warnings = response.json()["note"]["warnings"]
    by_target = {w["target"]: w for w in warnings}
    assert by_target["Nowhere"]["count"] == REPEATS, warnings
    assert by_target["Nowhere"]["line"] == 3  # the first one
    assert by_target["Also gone"]["count"] == 1
