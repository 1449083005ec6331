"""One crawl of a web source: robots.txt first, then the start URL, `sitemap.xml` and
`llms.txt` (when present) and every page already kept (for refresh) are queued; each fetched
page's links within the scope (`urls.Scope`) are queued after them. Each page is written to the
mirror folder atomically (a temporary file renamed), then recorded in the crawl state, so a
crawl killed at any point resumes from its queue at the next run and the mirror never holds a
half-written page. The indexer reads the mirror after the crawl (`source_indexes/collections`).

Bounds: `max_pages` pages kept, at most twice that many fetches a run, and a page whose content
is the same as a kept page's (a calendar's empty months, a query string that changes nothing)
is neither kept nor followed. A kept page answering 404 or 410 is removed; any other problem
(5xx, timeout, too large, a refused redirect, the site gone) keeps the page as last fetched and
is reported (`state.problems`, `vault-rag status`)."""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from protego import Protego

from vault_rag.sources.web.extract import EXTRACTOR_VERSION, decode, extract
from vault_rag.sources.web.fetch import Fetched, Fetcher, FetchProblem
from vault_rag.sources.web.state import MIRROR_DIR, STATE_FILE, CrawlState, Page
from vault_rag.sources.web.urls import Scope, mirror_path, normalise, origin

ROBOTS_AGENT = "vault-rag"
MAX_SITEMAPS = 10
MAX_CRAWL_DELAY = 30.0  # robots.txt's Crawl-delay is honoured up to this
_LOC = re.compile(r"<loc>\s*([^<\s]+)\s*</loc>", re.I)
_MD_LINK = re.compile(r"\]\(\s*([^)\s]+)")
_HTML = ("text/html", "application/xhtml+xml")
_PDF = ("application/pdf",)


@dataclass
class CrawlReport:
    fetched: int = 0  # requests made
    kept: int = 0  # pages written (new or changed)
    unchanged: int = 0  # 304s and bodies with the same content
    removed: int = 0  # 404/410
    skipped: int = 0  # out of scope, robots, duplicates, not a page
    problems: int = 0
    resumed: bool = False
    unreachable: str | None = None  # the site did not answer: pages kept as they were
    seconds: float = 0.0
    extract_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class CrawlOptions:
    url: str
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_pages: int = 500
    delay: float = 1.0
    timeout: float = 20.0
    max_bytes: int = 5 * 1024 * 1024
    max_retry_after: float = 60.0


def crawl(options: CrawlOptions, folder: Path, *, fetcher: Fetcher | None = None) -> CrawlReport:
    """Crawl into `folder` (the source's data folder: `pages/` and `crawl.sqlite3`)."""
    own = fetcher is None
    fetcher = fetcher or Fetcher(
        delay=options.delay,
        timeout=options.timeout,
        max_bytes=options.max_bytes,
        max_retry_after=options.max_retry_after,
    )
    state = CrawlState(folder / STATE_FILE)
    try:
        return _Crawl(options, folder, state, fetcher).run()
    finally:
        state.close()
        if own:
            fetcher.close()


class _Crawl:
    def __init__(
        self, options: CrawlOptions, folder: Path, state: CrawlState, fetcher: Fetcher
    ) -> None:
        self.options, self.state, self.fetcher = options, state, fetcher
        self.mirror = folder / MIRROR_DIR
        self.scope = Scope(normalise(options.url), options.include, options.exclude)
        self.report = CrawlReport()
        self.robots: Protego | None = None
        # Pages kept by another extractor are fetched in full, to be extracted again
        self.revalidate = state.get_meta("extractor") == EXTRACTOR_VERSION

    def run(self) -> CrawlReport:
        began = time.monotonic()
        self.mirror.mkdir(parents=True, exist_ok=True)
        try:
            self.robots = self._robots()
        except FetchProblem as problem:
            return self._gone(problem, began)
        self.state.set_meta("unreachable", "")
        asked = self.robots.crawl_delay(ROBOTS_AGENT) if self.robots else None
        if asked:
            self.fetcher.delay = max(self.fetcher.delay, min(float(asked), MAX_CRAWL_DELAY))
        seeds = [self.scope.start, *(p.url for p in self.state.pages())]
        if not (self.state.get_meta("run_started") and not self.state.get_meta("run_finished")):
            seeds += self._listed()
        self.report.resumed = self.state.begin(
            [u for u in dict.fromkeys(seeds) if self.scope.why_not(u) is None]
        )
        budget = 2 * self.options.max_pages + 10
        answered = False
        while (item := self.state.next_queued()) is not None:
            url, depth = item
            if self.report.fetched >= budget:
                self._problem(url, "max_pages", f"fetch budget of {budget} reached this run")
                break
            try:
                self._one(url, depth)
                answered = True
            except FetchProblem as problem:
                if problem.code == "unreachable" and not answered:
                    return self._gone(problem, began)
                self._problem(url, problem.code, str(problem))
            self.state.mark_done(url)
        self.state.finish()
        self.state.set_meta("extractor", EXTRACTOR_VERSION)
        self.report.seconds = time.monotonic() - began
        return self.report

    def _gone(self, problem: FetchProblem, began: float) -> CrawlReport:
        """The site does not answer: every kept page stays as last fetched."""
        self.state.set_meta("unreachable", str(problem))
        self.report.unreachable = str(problem)
        self.report.seconds = time.monotonic() - began
        return self.report

    def _problem(self, url: str, code: str, message: str) -> None:
        self.report.problems += 1
        self.state.problem(url, code, message)

    # --- what to fetch ---------------------------------------------------------------------
    def _robots(self) -> Protego:
        fetched = self.fetcher.get(self.scope.origin + "/robots.txt")
        self.report.fetched += 1
        if fetched.status >= 500:
            raise FetchProblem(
                "unreachable", f"robots.txt answers HTTP {fetched.status}: not crawled this run"
            )
        text = decode(fetched.body, fetched.headers.get("content-type", ""))
        return Protego.parse(text if fetched.status == 200 else "")

    def _allowed(self, url: str) -> bool:
        return self.robots is None or self.robots.can_fetch(url, ROBOTS_AGENT)

    def _listed(self) -> list[str]:
        """URLs from the sitemaps (robots.txt's, else `sitemap.xml` at the start folder and
        the origin) and from `llms.txt` (at the start folder, else the origin)."""
        found: list[str] = []
        sitemaps = list(self.robots.sitemaps) if self.robots else []
        sitemaps += [
            self.scope.origin + self.scope.prefix + "sitemap.xml",
            self.scope.origin + "/sitemap.xml",
        ]
        seen: set[str] = set()
        while sitemaps and len(seen) < MAX_SITEMAPS:
            url = normalise(sitemaps.pop(0))
            if url in seen or not self.scope.same_origin(url):
                continue
            seen.add(url)
            body = self._small_get(url)
            for loc in _LOC.findall(body):
                loc = normalise(loc.replace("&amp;", "&"))
                if loc.endswith(".xml"):
                    sitemaps.append(loc)
                else:
                    found.append(loc)
        for url in dict.fromkeys(
            [self.scope.origin + self.scope.prefix + "llms.txt", self.scope.origin + "/llms.txt"]
        ):
            body = self._small_get(url)
            links = [self.scope.resolve(url, href) for href in _MD_LINK.findall(body)]
            found += [link for link in links if link]
            if body:
                break
        return [u for u in found if self.scope.why_not(u) is None]

    def _small_get(self, url: str) -> str:
        if not self._allowed(url):
            return ""
        try:
            fetched = self.fetcher.get(url)
        except FetchProblem:
            return ""
        finally:
            self.report.fetched += 1
        if fetched.status != 200:
            return ""
        return decode(fetched.body, fetched.headers.get("content-type", ""))

    # --- one page --------------------------------------------------------------------------
    def _one(self, url: str, depth: int) -> None:
        why = self.scope.why_not(url)
        if why is None and not self._allowed(url):
            why = "disallowed by robots.txt"
        if why is not None:
            self.report.skipped += 1
            if self.state.page(url):
                self._remove(url)  # a kept page the rules now leave out
            return
        known = self.state.page(url)
        headers: dict[str, str] = {}
        if known and known.etag and self.revalidate:
            headers["If-None-Match"] = known.etag
        if known and known.last_modified and self.revalidate:
            headers["If-Modified-Since"] = known.last_modified
        self.report.fetched += 1
        fetched = self.fetcher.get(url, headers=headers)
        if fetched.status == 304 and known:
            self.state.touch(url)
            self.report.unchanged += 1
            return
        if fetched.status in (404, 410):
            if known:
                self._remove(url)
            else:
                self._problem(url, "not_found", f"{url}: HTTP {fetched.status}")
            return
        if fetched.status != 200:
            self._problem(url, f"http_{fetched.status}", f"{url}: HTTP {fetched.status}")
            return
        final = fetched.url
        if final != url and (self.scope.why_not(final) or self.state.page(final)):
            self.report.skipped += 1  # redirected to a page kept under its own URL
            return
        self._keep(final, fetched, depth, known if final == url else self.state.page(final))

    def _keep(self, url: str, fetched: Fetched, depth: int, known: Page | None) -> None:
        kind = fetched.content_type
        if kind in _PDF or (not kind and url.lower().endswith(".pdf")):
            body, title, anchors, links = fetched.body, url.rsplit("/", 1)[-1], {}, []
            rel = mirror_path(url, pdf=True)
        elif kind in _HTML or (not kind and fetched.body.lstrip()[:1] == b"<"):
            began = time.monotonic()
            page = extract(decode(fetched.body, fetched.headers.get("content-type", "")), url)
            self.report.extract_seconds += time.monotonic() - began
            links = [] if page.nofollow else page.links
            if page.noindex or not page.markdown.strip():
                self._follow(url, links, depth)
                self.report.skipped += 1
                why = "asks not to be indexed" if page.noindex else "has no main text"
                self.state.problem(url, "no_content", f"{url}: {why}: not indexed")
                if known:
                    self._remove(url)
                return
            body, title, anchors = page.markdown.encode("utf-8"), page.title, page.anchors
            rel = mirror_path(url)
        else:
            self.report.skipped += 1  # images, archives, anything that is not a page
            self.state.problem(url, "not_a_page", f"{url}: {kind or 'no type'}: not indexed")
            return
        digest = hashlib.sha256(body).hexdigest()
        owner = self.state.hash_owner(digest)
        if owner is not None and owner != url:
            self.report.skipped += 1
            self.state.problem(url, "duplicate", f"{url}: the same content as {owner}")
            return
        if known is None and len(self.state.pages()) >= self.options.max_pages:
            self._problem(url, "max_pages", f"{url}: not kept: max_pages reached")
            return
        if known is not None:
            rel = known.rel
        elif self.state.rel_owner(rel) is not None:
            stem, dot, suffix = rel.rpartition(".")
            rel = f"{stem}-{hashlib.sha256(url.encode()).hexdigest()[:8]}{dot}{suffix}"
        now = time.time()
        changed = known is None or known.content_hash != digest
        if changed:
            _write_atomic(self.mirror / rel, body)
            self.report.kept += 1
        else:
            self.report.unchanged += 1
        self.state.put_page(
            Page(
                url=url,
                rel=rel,
                content_type=kind,
                title=title,
                anchors=anchors,
                etag=fetched.headers.get("etag"),
                last_modified=fetched.headers.get("last-modified"),
                content_hash=digest,
                fetched_at=now,
                changed_at=now if changed else known.changed_at,  # type: ignore[union-attr]
            )
        )
        self._follow(url, links, depth)

    def _follow(self, base: str, links: list[str], depth: int) -> None:
        if len(self.state.pages()) >= self.options.max_pages:
            return
        for href in links:
            url = self.scope.resolve(base, href)
            if url and self.scope.why_not(url) is None and origin(url) == self.scope.origin:
                self.state.enqueue(url, depth + 1, commit=False)
        self.state.db.commit()

    def _remove(self, url: str) -> None:
        page = self.state.page(url)
        if page is None:
            return
        (self.mirror / page.rel).unlink(missing_ok=True)
        self.state.drop_page(url)
        self.report.removed += 1


def _write_atomic(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name("." + path.name + ".part")
    with open(temporary, "wb") as handle:
        handle.write(body)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
