"""Kill -9 of `vault-rag index` in the middle of a web source's crawl: the next run resumes
from the crawl's queue (pages already kept are not fetched again) and ends with every page
indexed once, nothing half-written in the mirror and the index agreeing with the crawl state.
A real subprocess against a local site (127.0.0.1) whose pages answer slowly."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from vault_rag.index.manifest import Manifest
from vault_rag.sources.web.state import MIRROR_DIR, STATE_FILE, CrawlState
from web_site_content import html

from fakes.web_site import Site, send

PAGES = 30


def _kept(file: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{file}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_kill_9_mid_crawl_then_the_rerun_completes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nA note.\n", encoding="utf-8")
    data = tmp_path / "data"
    env = {
        **os.environ,
        "VAULT_RAG_EMBEDDINGS": "hash",
        "VAULT_RAG_WEB_DELAY": "0",
        "VAULT_RAG_CONFIG": str(tmp_path / "none.toml"),
    }
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    pause = {"seconds": 0.25}

    def page(handler) -> None:
        time.sleep(pause["seconds"])
        n = int(handler.path.rsplit("/p", 1)[-1].split(".")[0])
        links = "".join(f'<a href="p{i}.html">{i}</a> ' for i in range(PAGES))
        body = html(f"Page {n}", f"<h1>Page {n}</h1><p>Topic number {n} of the manual: "
                    f"the setting s{n} controls part {n}.</p>{links}")  # fmt: skip
        send(handler, 200, body.encode(), "text/html", {"ETag": f'"p{n}"'})

    def cli(*args: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "vault_rag",
            *args,
            "--vault",
            str(vault),
            "--data-dir",
            str(data),
        ]

    with Site() as site:
        site.page("/docs/", html("Home", '<h1>Home</h1><a href="p0.html">start</a>'))
        site.handle("/docs/p", page, prefix=True)
        added = subprocess.run(
            cli("sources", "add", "manual", site.url("/docs/"), "--kind", "web"),
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        state_file = data / "sources" / "manual" / STATE_FILE
        first = subprocess.Popen(
            cli("index"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 60
            while _kept(state_file) < 5:
                assert first.poll() is None, "the index run ended before it could be killed"
                assert time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
        killed_at = _kept(state_file)
        assert 5 <= killed_at < PAGES + 1
        before = len(site.requests)
        pause["seconds"] = 0.0
        rerun = subprocess.run(cli("index"), env=env, capture_output=True, text=True, check=False)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert "(resumed)" in rerun.stdout
        fetched_again = [p for p, _ in site.requests[before:] if p.startswith("/docs/p")]
    assert len(fetched_again) <= PAGES - killed_at + 2  # resumed, not restarted

    folder = data / "sources" / "manual"
    state = CrawlState(folder / STATE_FILE)
    try:
        rels = {p.rel for p in state.pages()}
    finally:
        state.close()
    assert len(rels) == PAGES + 1
    mirror = folder / MIRROR_DIR
    assert not list(mirror.rglob("*.part"))
    assert {str(p.relative_to(mirror)) for p in mirror.rglob("*.md")} == rels
    manifest = Manifest(folder / "manifest.sqlite3")
    try:
        assert set(manifest.notes()) == rels
        assert manifest.counts()["chunks"] >= PAGES + 1
    finally:
        manifest.close()
