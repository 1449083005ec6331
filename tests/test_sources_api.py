"""`POST /v1/sources` and `DELETE /v1/sources/{name}` (issue 42, over HTTP): a web source added
to a running server, crawled from a loopback docs site (`fakes/web_site.py`), indexed by the
server and searchable, then removed with its index; the CLI's refusals (file:// URLs, bad names,
a taken name, a relative folder) as 4xx `ErrorBody`s. A real uvicorn server, hash embedder."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from test_server_helpers import LiveServer, wait_idle, wait_until
from vault_rag.api import create_app
from vault_rag.settings import Settings
from web_site_content import docs_site

from fakes.web_site import Site

TOKEN = "test-token-0123456789"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_SERVER_WATCH", "false")
    monkeypatch.setenv("VAULT_RAG_WEB_DELAY", "0")
    monkeypatch.setenv("VAULT_RAG_WEB_TIMEOUT", "2")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nMy own notes about gardening.\n", encoding="utf-8")
    return {"vault": vault, "data": tmp_path / "data"}


@pytest.fixture
def live(env):
    settings = Settings(vault=env["vault"], data_dir=env["data"])
    with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as server:
        wait_idle(server)
        yield server


def _collections(client: httpx.Client) -> dict:
    return client.get("/v1/collections").json()


def test_add_index_search_and_remove_a_web_source(env, live, tmp_path: Path) -> None:
    with Site() as site, live.client() as client:
        docs_site(site, tmp_path)
        body = {
            "name": "widget",
            "kind": "web",
            "url": site.url("/docs/"),
            "exclude": ["malformed.html"],
            "max_pages": 50,
        }
        added = client.post("/v1/sources", json=body)
        assert added.status_code == 201, added.text
        answer = added.json()
        assert answer["name"] == "widget" and answer["kind"] == "web"
        assert answer["path"] == site.url("/docs/") and answer["max_pages"] == 50
        assert answer["indexing"] is True and "GET /v1/collections" in answer["next"]

        def indexed() -> dict | None:
            listed = _collections(client)
            found = {c["name"]: c for c in listed["collections"]}.get("widget")
            return found if found and found["indexed"] and not listed["scanning"] else None

        widget = wait_until(indexed, 60)
        assert widget["kind"] == "web" and widget["files"] == 8 and widget["problem"] is None
        assert "/docs/malformed.html" not in site.paths()

        found = client.post(
            "/v1/search", json={"query": "quokka compiler missing", "collections": ["widget"]}
        )
        assert found.status_code == 200, found.text
        top = found.json()["results"][0]
        assert top["kind"] == "web" and top["collection"] == "widget"
        assert top["url"] == site.url("/docs/install.html#troubleshooting")
        assert top["page_title"] == "Installation — Widget docs"

        again = client.post("/v1/sources", json=body)
        assert again.status_code == 409 and again.json()["code"] == "source_exists"

        removed = client.delete("/v1/sources/widget")
        assert removed.status_code == 200, removed.text
        assert removed.json() == {"name": "widget", "removed_index": True}
        assert not (env["data"] / "sources" / "widget").exists()
        assert [c["name"] for c in _collections(client)["collections"]] == ["vault"]
        gone = client.delete("/v1/sources/widget")
        assert gone.status_code == 404
        assert gone.json()["code"] == "no_source" and "widget" in gone.json()["message"]


@pytest.mark.parametrize(
    ("body", "status", "code", "words"),
    [
        ({"name": "docs", "kind": "web", "url": "file:///etc/"}, 422, "invalid_source",
         "only http:// and https://"),
        ({"name": "docs", "kind": "web", "url": "ftp://127.0.0.1/docs/"}, 422, "invalid_source",
         "only http:// and https://"),
        ({"name": "Bad Name", "kind": "web", "url": "http://127.0.0.1:9/docs/"}, 422,
         "invalid_source", "name"),
        ({"name": "vault", "kind": "web", "url": "http://127.0.0.1:9/docs/"}, 409,
         "source_exists", "taken"),
        ({"name": "docs", "kind": "web"}, 422, "invalid_source", "needs `url`"),
        ({"name": "docs", "kind": "code", "path": "relative/folder"}, 422, "invalid_source",
         "absolute"),
        ({"name": "docs", "kind": "code", "path": "/no/such/folder"}, 422, "invalid_source",
         "does not exist"),
        ({"name": "docs", "kind": "code", "path": "/tmp", "max_pages": 3}, 422,
         "invalid_source", "web only"),
        ({"name": "docs", "kind": "ftp", "url": "http://127.0.0.1:9/"}, 422, "invalid_request",
         "kind"),
    ],
)  # fmt: skip
def test_refusals_are_the_clis_as_error_bodies(env, live, body, status, code, words) -> None:
    with live.client() as client:
        refused = client.post("/v1/sources", json=body)
    assert refused.status_code == status, refused.text
    error = refused.json()
    assert error["code"] == code and words in error["message"], error
    assert set(error) == {"code", "message", "detail"}
    assert not (env["data"] / "sources.json").exists()


def test_a_code_source_inside_the_vault_and_the_vault_itself(env, live, tmp_path: Path) -> None:
    inside = env["vault"] / "code"
    inside.mkdir()
    with live.client() as client:
        refused = client.post(
            "/v1/sources", json={"name": "c", "kind": "code", "path": str(inside)}
        )
        assert refused.status_code == 422 and "inside the vault" in refused.json()["message"]
        vault = client.delete("/v1/sources/vault")
        assert vault.status_code == 422 and "not a source" in vault.json()["message"]
        anonymous = httpx.post(f"{live.url}/v1/sources", json={"name": "c", "kind": "web"})
        assert anonymous.status_code == 401
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "turret.py").write_text("def aim_turret(range):\n    return range\n", "utf-8")
        added = client.post("/v1/sources", json={"name": "game", "kind": "code", "path": str(repo)})
        assert added.status_code == 201, added.text
        assert added.json()["path"] == str(repo.resolve())
        wait_until(lambda: not _collections(client)["scanning"], 60)
        listed = {c["name"]: c for c in _collections(client)["collections"]}
        assert listed["game"]["indexed"] and listed["game"]["files"] == 1
        removed = client.delete("/v1/sources/game")
        assert removed.status_code == 200 and removed.json()["removed_index"] is True
    assert repo.is_dir()  # the folder itself is never touched
