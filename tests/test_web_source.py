"""Web sources (issue 42): the crawler against real local HTTP servers the tests build (a docs
site with chrome, a PDF, an image, odd charsets, malformed HTML, robots.txt, a sitemap and an
llms.txt; and each fault: off-origin and looping redirects, 404/500/429, a slow server, a
never-ending and a dripping body, a huge page, an infinite calendar, query strings that change
nothing, a site that goes away). Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.cli import app
from vault_rag.sources.web.crawl import CrawlOptions, crawl
from vault_rag.sources.web.extract import decode, extract
from vault_rag.sources.web.state import MIRROR_DIR, STATE_FILE, CrawlState
from vault_rag.sources.web.urls import Scope, WebUrlError, check_start_url, mirror_path
from web_site_content import INSTALL, docs_site, fault_site, html

from fakes.web_site import Site, send

runner = CliRunner()


def _options(site: Site, **kw) -> CrawlOptions:
    base = {"delay": 0.0, "timeout": 1.0, "max_bytes": 200_000, "max_retry_after": 5.0}
    return CrawlOptions(url=site.url("/docs/"), **{**base, **kw})


def _pages(folder: Path) -> dict[str, str]:
    state = CrawlState(folder / STATE_FILE)
    try:
        return {p.url.split("/docs/", 1)[-1]: p.rel for p in state.pages()}
    finally:
        state.close()


def _problems(folder: Path) -> dict[str, str]:
    state = CrawlState(folder / STATE_FILE)
    try:
        return {p["url"].split("/docs/", 1)[-1]: p["code"] for p in state.problems()}
    finally:
        state.close()


@pytest.fixture
def site(tmp_path: Path):
    with Site() as served:
        docs_site(served, tmp_path)
        yield served


# --- URLs ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.org/docs/",
        "javascript:alert(1)",
        "docs/",
        "http://user:pw@127.0.0.1/",
    ],
)
def test_only_http_urls_without_credentials_are_accepted(url: str) -> None:
    with pytest.raises(WebUrlError):
        check_start_url(url)
    assert check_start_url("HTTP://Example.ORG:80/docs/#x") == "http://example.org/docs/"


def test_scope_and_mirror_paths() -> None:
    scope = Scope("http://127.0.0.1:9/docs/guide/intro.html", [], ["*.zip"])
    assert scope.prefix == "/docs/guide/"
    assert scope.why_not("http://127.0.0.1:9/docs/guide/a.html") is None
    assert scope.why_not("http://127.0.0.1:9/docs/other.html") == "outside the start URL's folder"
    assert scope.why_not("http://127.0.0.2:9/docs/guide/a.html") == "another origin"
    assert scope.why_not("http://127.0.0.1:9/docs/guide/x.zip")
    assert mirror_path("http://h/docs/guide/") == "docs/guide/index.md"
    assert mirror_path("http://h/docs/a.html?m=3").startswith("docs/a.html-")
    assert mirror_path("http://h/docs/manual.pdf", pdf=True) == "docs/manual.pdf"
    assert mirror_path("http://h/.hidden/../x") == "hidden/x.md"


# --- extraction ---------------------------------------------------------------------------
def test_extraction_keeps_content_and_drops_chrome() -> None:
    page = extract(INSTALL, "http://127.0.0.1/docs/install.html")
    md = page.markdown
    assert "# Installation" in md and "## From PyPI" in md
    assert "```" in md and "pip install widget-zanzibar" in md
    for chrome in ("cookies", "Search the docs", "Copyright", "Privacy"):
        assert chrome not in md, chrome
    assert "¶" not in md
    assert page.title == "Installation — Widget docs"
    assert page.anchors == {
        "installation": "installation",
        "from pypi": "from-pypi",
        "troubleshooting": "troubleshooting",
    }


def test_sections_named_like_chrome_are_kept_and_chrome_is_not() -> None:
    """A docs section whose slug id says `cookies` or `navigation` (Sphinx: `<section
    id="cookies">`) is content; a banner whose id is not its heading's slug is still chrome."""
    body = (
        '<div id="cookie-consent"><h2>We use cookies</h2><p>Accept all to continue.</p></div>'
        '<div role="main"><section id="guide"><h1>Guide</h1><p>Intro text of the guide.</p>'
        '<section id="cookies"><h2>Cookies</h2><p>Read the jar with r.cookies here.</p>'
        "</section>"
        '<section id="navigation"><h2 id="navigation">Navigation</h2>'
        "<p>Moving between pages of results.</p></section></section></div>"
    )
    page = extract(html("Guide", body), "http://127.0.0.1/docs/guide.html")
    assert "## Cookies" in page.markdown and "Read the jar with r.cookies" in page.markdown
    assert "## Navigation" in page.markdown and "pages of results" in page.markdown
    assert "Accept all" not in page.markdown
    assert page.anchors["cookies"] == "cookies" and page.anchors["navigation"] == "navigation"


def test_charsets() -> None:
    assert decode("café".encode("latin-1"), "text/html") == "café"
    assert decode("中文".encode(), "text/html; charset=iso-8859-1") == "中文"  # valid UTF-8 wins
    gbk = '<meta charset="gbk"><p>中文</p>'.encode("gbk")
    assert "中文" in decode(gbk, "text/html")
    assert decode(b"caf\xe9 \x81", "text/html; charset=bogus").startswith("caf")


# --- the crawl ----------------------------------------------------------------------------
def test_crawl_keeps_the_docs_and_honours_robots_sitemap_and_llms(
    site: Site, tmp_path: Path
) -> None:
    folder = tmp_path / "src"
    report = crawl(_options(site), folder)
    pages = _pages(folder)
    assert set(pages) == {
        "", "install.html", "config.html", "manual.pdf", "latin1.html", "wrong.html",
        "malformed.html", "from-sitemap.html", "from-llms.html",
    }  # fmt: skip
    assert report.kept == len(pages) and report.problems == 0
    paths = site.paths()
    assert "/docs/private/secret.html" not in paths  # robots.txt
    assert "/blog/post.html" not in paths  # outside the start folder
    assert paths[0] == "/robots.txt"
    for _, headers in site.requests:
        assert headers["user-agent"].startswith("vault-rag/")
        assert "cookie" not in headers and "authorization" not in headers
    mirror = folder / MIRROR_DIR
    assert (mirror / pages["manual.pdf"]).read_bytes().startswith(b"%PDF")
    assert "crème brûlée" in (mirror / pages["latin1.html"]).read_text(encoding="utf-8")
    assert "修改后需要重启引擎" in (mirror / pages["wrong.html"]).read_text(encoding="utf-8")
    assert "pangolin" in (mirror / pages["malformed.html"]).read_text(encoding="utf-8")
    assert _problems(folder) == {"logo.png": "not_a_page"}
    assert not list(mirror.rglob("*.part"))


def test_faults_are_reported_and_bounded(tmp_path: Path) -> None:
    with Site() as site:
        site.page(
            "/docs/", html("Home", '<h1>Home</h1><p>See <a href="faults.html">faults</a>.</p>')
        )
        counter = fault_site(site)
        began = time.monotonic()
        report = crawl(_options(site), tmp_path / "src")
        took = time.monotonic() - began
    problems = _problems(tmp_path / "src")
    assert problems == {
        "away.html": "redirect_off_origin",
        "loop-a.html": "redirect_loop",
        "missing.html": "not_found",
        "install.html": "not_found",  # the chrome's links, never served here
        "config.html": "not_found",
        "broken.html": "http_500",
        "slow.html": "timeout",
        "endless.html": "too_large",
        "drip.html": "timeout",
        "huge.html": "too_large",
    }
    assert counter["busy"] == 2  # 429 + Retry-After: waited, then fetched
    assert "busy.html" in _pages(tmp_path / "src")
    assert report.problems == len(problems)
    assert took < 20  # every slow thing is cut short


def test_retry_after_longer_than_the_setting_is_left_for_next_run(tmp_path: Path) -> None:
    with Site() as site:
        site.handle("/docs/", lambda h: send(h, 503, b"", "text/plain", {"Retry-After": "3600"}))
        crawl(_options(site), tmp_path / "src")
        assert _problems(tmp_path / "src") == {"": "retry_after"}
        assert site.paths().count("/docs/") == 1


def test_infinite_spaces_are_bounded_by_max_pages_and_duplicates(tmp_path: Path) -> None:
    def calendar(handler) -> None:
        month = int(handler.path.rsplit("=", 1)[-1])
        body = html(
            f"Month {month}",
            f"<h1>Month {month}</h1><p>Events of month {month}.</p>"
            f'<a href="calendar?m={month + 1}">next</a> <a href="search?q={month}">find</a>',
        )
        send(handler, 200, body.encode(), "text/html")  # fmt: skip

    def search(handler) -> None:  # every query string: the same page
        body = html("Search", '<h1>Search</h1><p>Type a query.</p><a href="search?q=x">x</a>')
        send(handler, 200, body.encode(), "text/html")

    with Site() as site:
        site.page("/docs/", html("Home", '<h1>Home</h1><a href="calendar?m=1">cal</a>'))
        site.handle("/docs/calendar", calendar, prefix=True)
        site.handle("/docs/search", search, prefix=True)
        report = crawl(_options(site, max_pages=8), tmp_path / "src")
        fetched = len(site.requests)
    pages = _pages(tmp_path / "src")
    assert len(pages) == 8
    assert sum(1 for url in pages if url.startswith("search")) == 1  # one copy of the same page
    assert fetched <= 2 * 8 + 10 + 4  # the fetch budget (+ robots, sitemaps, llms.txt)
    assert "duplicate" in set(_problems(tmp_path / "src").values())
    assert report.kept == 8


def test_refresh_is_all_304_and_a_gone_page_is_removed(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    crawl(_options(site), folder)
    before = len(site.requests)
    del site.pages["/docs/config.html"]  # now 404
    report = crawl(_options(site), folder)
    conditional = [h for p, h in site.requests[before:] if "if-none-match" in h]
    assert len(conditional) >= 8
    assert report.kept == 0 and report.removed == 1
    assert "config.html" not in _pages(folder)
    assert not any(p.name.startswith("config") for p in (folder / MIRROR_DIR).rglob("*"))


def test_a_new_extractor_fetches_every_page_in_full_once(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    crawl(_options(site), folder)
    state = CrawlState(folder / STATE_FILE)
    state.set_meta("extractor", "0")  # the mirror was made by an older extraction
    state.close()
    before = len(site.requests)
    report = crawl(_options(site), folder)
    sent = site.requests[before:]
    assert not any("if-none-match" in h or "if-modified-since" in h for _, h in sent)
    assert report.kept == 0 and report.unchanged >= 8  # the same Markdown: nothing re-indexed
    before = len(site.requests)
    crawl(_options(site), folder)  # and then back to conditional requests
    assert any("if-none-match" in h for _, h in site.requests[before:])


def test_a_site_that_goes_away_keeps_its_pages(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    crawl(_options(site), folder)
    kept = _pages(folder)
    site.down = True
    report = crawl(_options(site), folder)
    assert report.unreachable
    assert _pages(folder) == kept
    state = CrawlState(folder / STATE_FILE)
    try:
        assert state.get_meta("unreachable")
    finally:
        state.close()


# --- as a user adds and indexes it --------------------------------------------------------
@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_WEB_DELAY", "0")
    monkeypatch.setenv("VAULT_RAG_WEB_TIMEOUT", "2")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nMy own notes about gardening.\n", encoding="utf-8")
    return {"vault": vault, "data": tmp_path / "data"}


def _cli(env: dict[str, Path], *args: str):
    return runner.invoke(app, [*args, "--vault", str(env["vault"]), "--data-dir", str(env["data"])])


def test_sources_add_refuses_file_urls(env) -> None:
    for url in ("file:///etc/", "ftp://127.0.0.1/docs/"):
        result = _cli(env, "sources", "add", "docs", url, "--kind", "web")
        assert result.exit_code != 0
        assert "only http:// and https://" in result.output
    assert not (env["data"] / "sources.json").exists()


def test_add_index_search_status_refresh(env, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_rag.embeddings.hashing import HashProvider

    added = _cli(env, "sources", "add", "widget", site.url("/docs/"), "--kind", "web",
                 "--exclude", "malformed.html", "--max-pages", "50")  # fmt: skip
    assert added.exit_code == 0, added.output
    result = _cli(env, "index")
    assert result.exit_code == 0, result.output
    assert "source widget: crawl:" in result.output
    where = ["--vault", str(env["vault"]), "--data-dir", str(env["data"]), "--json", "--in-process"]
    found = runner.invoke(
        app, ["search", "quokka compiler missing", "--collection", "widget", *where]
    )
    assert found.exit_code == 0, found.output
    top = json.loads(found.stdout)["results"][0]
    assert top["kind"] == "web" and top["collection"] == "widget"
    assert top["url"] == site.url("/docs/install.html#troubleshooting")
    assert top["page_title"] == "Installation — Widget docs"
    assert top["heading_path"].endswith("Troubleshooting")
    pdf = json.loads(
        runner.invoke(
            app, ["search", "okapi printing pipeline", "--collection", "widget", *where]
        ).stdout
    )["results"][0]
    assert pdf["kind"] == "web_pdf" and pdf["url"] == site.url("/docs/manual.pdf#page=1")
    assert "/docs/malformed.html" not in site.paths()

    listed = json.loads(_cli(env, "sources", "list", "--json").stdout)
    assert listed[0]["kind"] == "web" and listed[0]["path"] == site.url("/docs/")
    assert listed[0]["max_pages"] == 50 and listed[0]["files"] == 8
    status = json.loads(_cli(env, "status", "--json").stdout)
    web = status["sources"]["widget"]["web"]
    assert web["pages"] == 8 and web["last_fetched"] > 0
    assert [p["code"] for p in web["problems"]] == ["not_a_page"]

    calls = {"n": 0}
    original = HashProvider.embed_documents

    def counted(self, texts):
        calls["n"] += len(texts)
        return original(self, texts)

    monkeypatch.setattr(HashProvider, "embed_documents", counted)
    again = _cli(env, "index")
    assert again.exit_code == 0, again.output
    assert "0 pages new or changed" in again.output
    assert calls["n"] == 0  # all 304s: nothing embedded

    removed = _cli(env, "sources", "remove", "widget")
    assert removed.exit_code == 0
    assert not (env["data"] / "sources" / "widget").exists()
