"""Issue 31, defect 8: a YAML alias bomb in frontmatter. A note of a few hundred bytes whose
`aliases:` nests 8 levels of `*ref` lists stood for 9^9 strings once walked: it stalled the
writer ~90 s, took the server to 1 GB and added 69 MB to the manifest. Its properties are now
ignored with a `bad_frontmatter` warning, and `aliases` / `tags` are capped. Real files, a real
uvicorn server, real SQLite."""

from __future__ import annotations

import itertools
import time

from test_server_helpers import LiveServer, wait_idle, wait_until
from vault_rag.vault.frontmatter import MAX_NAMES, split_frontmatter

LEVELS = "abcdefgh"


def alias_bomb(levels: int = 8) -> str:
    lines = ["---", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in itertools.pairwise(LEVELS[:levels]):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    lines.append("aliases: [" + ",".join([f"*{LEVELS[levels - 1]}"] * 9) + "]")
    return "\n".join([*lines, "---", "# Bomb", "", "A note about quokkas.", ""])


def test_an_alias_bomb_is_refused_with_a_warning():
    text = alias_bomb()
    assert len(text.encode()) < 500
    data, body, start, warnings = split_frontmatter(text, "Bomb.md")
    assert data == {}
    assert body.startswith("# Bomb") and start == 12
    assert [w.code for w in warnings] == ["bad_frontmatter"]
    assert "YAML aliases" in warnings[0].message


def test_a_recursive_alias_is_refused_too():
    data, _, _, warnings = split_frontmatter("---\na: &a [1, *a]\n---\nbody\n", "R.md")
    assert data == {} and [w.code for w in warnings] == ["bad_frontmatter"]


def test_ordinary_properties_and_short_lists_are_kept():
    text = "---\naliases: &x [Quokka, 短尾矮袋鼠]\nalso: *x\ntags: [zoo]\n---\nbody\n"
    data, _, _, warnings = split_frontmatter(text, "Ok.md")
    assert warnings == []
    assert data == {
        "aliases": ["Quokka", "短尾矮袋鼠"],
        "also": ["Quokka", "短尾矮袋鼠"],
        "tags": ["zoo"],
    }


def test_aliases_and_tags_are_capped():
    many = ", ".join(f"name{i}" for i in range(MAX_NAMES + 50))
    text = f"---\naliases: [{many}]\ntags: {many}\n---\nbody\n"
    data, _, _, warnings = split_frontmatter(text, "Many.md")
    assert data["aliases"] == [f"name{i}" for i in range(MAX_NAMES)]
    assert len(data["tags"]) == MAX_NAMES
    assert [w.code for w in warnings] == ["bad_frontmatter", "bad_frontmatter"]


# The module's live server (conftest `live`): the sample vault, hash embeddings.
SERVER_SETTINGS = {"embeddings": "hash"}


def test_a_running_server_indexes_the_bomb_as_a_plain_note(live: LiveServer):
    vault = live.state.index.vault_root
    manifest = live.state.index.manifest
    size = manifest.path.stat().st_size
    (vault / "Bomb.md").write_text(alias_bomb(), encoding="utf-8")
    wait_until(lambda: manifest.note("Bomb.md"), 60)
    with live.client() as client:
        note = {"path": "Bomb.md", "content": alias_bomb(), "mtime": time.time() * 1000}
        assert client.put("/v1/notes", json={"notes": [note]}).status_code == 200
        wait_idle(live)
        state = client.get("/v1/status", params={"path": "Bomb.md"}).json()["note"]
        assert "bad_frontmatter" in {w["code"] for w in state["warnings"]}
        rows = manifest.db.execute(
            "SELECT SUM(LENGTH(data)) FROM chunks WHERE note_path='Bomb.md'"
        ).fetchone()
        assert rows[0] < 5_000  # one small unit, not the expanded aliases
        hits = client.post("/v1/search", json={"query": "quokkas", "k": 3}).json()["results"]
        assert hits and hits[0]["note_path"] == "Bomb.md"
    assert manifest.path.stat().st_size - size < 1_000_000
