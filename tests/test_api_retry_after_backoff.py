"""`Retry-After` of a 503 `embedding_unavailable` on a real uvicorn server (issue 29): when the
model server is down, the writer backs off (1, 2, 4… s, at most 60) and the answer says when it
calls the model again, not a fixed guess; a 404 carries none."""

from __future__ import annotations

import shutil
from pathlib import Path

from test_server_helpers import LiveServer, wait_until
from vault_rag.api.app import create_app
from vault_rag.settings import Settings

from fakes.openai_server import ErrorReply, FakeOpenAIServer

KEY = "sk-embed-secret-4242"


def test_a_model_that_is_down_answers_with_the_writers_back_off(tmp_path, sample_vault: Path):
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault, vault)
    with FakeOpenAIServer(dimension=48, api_key=KEY) as endpoint:
        endpoint.embedding_error = lambda inputs: ErrorReply(503, "the server is down")
        settings = Settings(
            vault=vault,
            data_dir=tmp_path / "data",
            embeddings="openai",
            embeddings_model="fake-embedding",
            embeddings_base_url=endpoint.base_url,
            embeddings_api_key=KEY,
            server_watch=False,
            llm_model=None,
            tavily_api_key=None,
        )
        app = create_app(settings, token="test-token-0123456789")
        with LiveServer(app) as live, live.client() as client:
            writer = live.state.writer
            # A note to embed: the writer's model call fails and it backs off.
            text = "# New\n\nLumen bounces light.\n"
            (vault / "New.md").write_text(text)
            note = {"path": "New.md", "content": text, "embeds": []}
            put = client.put("/v1/notes", json={"notes": [note]})
            assert put.status_code == 200, put.text
            wait_until(lambda: writer.backoff_left() > 0 or None, 60, interval=0.05)
            # Posted with `wait=true` the note needs its vectors now: the failure is a 503.
            answer = client.put("/v1/notes", json={"notes": [note]}, params={"wait": "true"})
            left = writer.backoff_left()
            assert answer.status_code == 503, answer.text
            assert answer.json()["code"] == "embedding_unavailable"
            wait = int(answer.headers["Retry-After"])
            # The writer's own back-off rounded up; or, when it ran out meanwhile, the poll.
            assert abs(wait - left) <= 1.5 or (left == 0 and wait == 10), (wait, left)
            missing = client.get("/v1/notes/none.md")
            assert missing.status_code == 404 and "Retry-After" not in missing.headers
