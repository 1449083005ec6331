"""Web sources (issue 42): page extraction compared (trafilatura, what `sources/web/extract.py`
uses, vs readability-lxml + markdownify) and a whole web source crawled from a local server.

    python -m benchmarks web extract [--site DIR]
    python -m benchmarks web crawl [--site DIR] [--embeddings hash|local]

The site is an HTML manual on disk, by default Debian's `python-requests-doc`
(/usr/share/doc/python-requests-doc/html, Sphinx: 27 pages with a sidebar, search box, footer,
code blocks and tables); the crawl serves it with `http.server` on 127.0.0.1 (which answers
If-Modified-Since with 304) and never leaves loopback.

`extract`: per extractor, pages/s and what is kept of each page's main region (Sphinx's
`div[role=main]`): its headings as Markdown headings, its `<pre>` blocks as fenced code, its
tables as Markdown tables, and how many pages still carry chrome (the sidebar's "Quick search",
"Table of Contents", "Navigation", "Show Source", the footer's "©").

`crawl`: the first index of a web source over the site (crawl + extraction + units, then the
embedding model), the share of it spent outside the model, pages/s fetched and extracted, and a
refresh of the unchanged site (every page a 304)."""

from __future__ import annotations

import argparse
import functools
import re
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DEFAULT_SITE = Path("/usr/share/doc/python-requests-doc/html")
CHROME = ("Quick search", "Table of Contents", "Navigation", "Show Source", "©")


def _main_region(html: str):
    import lxml.html

    doc = lxml.html.document_fromstring(html)
    found = doc.xpath("//div[@role='main']") or doc.xpath("//main") or [doc]
    return found[0]


def _quality(html: str, markdown: str) -> dict[str, int]:
    main = _main_region(html)
    headings = [
        re.sub(r"\s+", " ", h.text_content()).replace("¶", "").strip()
        for h in main.iter("h1", "h2", "h3", "h4", "h5", "h6")
    ]
    md_headings = {
        re.sub(r"[`*_\\]", "", line.lstrip("#").strip())
        for line in markdown.splitlines()
        if line.startswith("#")
    }
    return {
        "headings": len(headings),
        "headings_kept": sum(1 for h in headings if re.sub(r"[`*_\\]", "", h) in md_headings),
        "code": len(main.xpath(".//pre")),
        "code_kept": markdown.count("```") // 2,
        "tables": len(main.xpath(".//table")),
        "tables_kept": len(re.findall(r"^\|?\s*:?-{3,}", markdown, re.M)),
        "chrome": int(any(word in markdown for word in CHROME)),
    }


def _readability(html: str, url: str) -> str:
    from markdownify import markdownify
    from readability import Document

    return markdownify(Document(html).summary(html_partial=True), heading_style="ATX")


def _trafilatura(html: str, url: str) -> str:
    from vault_rag.sources.web.extract import extract

    return extract(html, url).markdown


def extract_table(site: Path) -> str:
    pages = [
        (p, p.read_text(encoding="utf-8", errors="replace")) for p in sorted(site.rglob("*.html"))
    ]
    rows = [
        "| extractor | pages | pages/s | headings kept | code blocks kept | tables kept "
        "| pages with chrome |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    extractors = {"trafilatura (chosen)": _trafilatura}
    try:
        import markdownify  # noqa: F401
        import readability  # noqa: F401

        extractors["readability-lxml + markdownify"] = _readability
    except ImportError:
        rows.append("| readability-lxml + markdownify | not installed | | | | | |")
    for name, fn in extractors.items():
        total: dict[str, int] = {}
        began = time.perf_counter()
        outputs = [fn(html, f"http://127.0.0.1/{p.name}") for p, html in pages]
        seconds = time.perf_counter() - began
        for (_, html), md in zip(pages, outputs, strict=True):
            for key, value in _quality(html, md).items():
                total[key] = total.get(key, 0) + value
        rows.append(
            f"| {name} | {len(pages)} | {len(pages) / seconds:.0f} | "
            f"{total['headings_kept']}/{total['headings']} | "
            f"{min(total['code_kept'], total['code'])}/{total['code']} | "
            f"{min(total['tables_kept'], total['tables'])}/{total['tables']} | {total['chrome']} |"
        )
    return "\n".join(rows)


class _Server:
    def __init__(self, site: Path) -> None:
        handler = functools.partial(_Quiet, directory=str(site))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def crawl_table(site: Path, embeddings: str) -> str:
    from vault_rag.serving.context import build_provider
    from vault_rag.settings import Settings, SourceSpec
    from vault_rag.source_indexes.collections import index_source, source_data_dir
    from vault_rag.source_indexes.specs import resolve_root

    rows = [
        "| run | pages | seconds | outside the model | in the model (s) "
        "| crawl (of it extraction), s | requests/s fetched + extracted |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp, _Server(site) as url:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        settings = Settings(
            vault=vault, data_dir=Path(tmp) / "data", embeddings=embeddings, web_delay=0
        )
        spec = SourceSpec(name="manual", kind="web", url=url)
        provider = build_provider(settings)
        provider.embed_documents(["warm up"])
        in_model = [0.0]
        embed = provider.embed_documents

        def timed(texts: list[str]) -> list[list[float]]:
            began = time.perf_counter()
            try:
                return embed(texts)
            finally:
                in_model[0] += time.perf_counter() - began

        provider.embed_documents = timed  # type: ignore[method-assign]
        root = resolve_root(spec, settings.resolved_data_dir())
        for run in ("first index", "refresh (unchanged)"):
            in_model[0] = 0.0
            began = time.perf_counter()
            done = index_source(settings, spec, root, provider)
            seconds = time.perf_counter() - began
            assert done.error is None and done.crawl is not None, done.error
            report = done.crawl
            pages = len(
                list(
                    (source_data_dir(settings.resolved_data_dir(), "manual") / "pages").rglob(
                        "*.md"
                    )
                )
            )
            outside = (seconds - in_model[0]) / seconds if seconds else 0.0
            rate = report.fetched / report.seconds if report.seconds else 0.0
            rows.append(
                f"| {run} | {pages} | {seconds:.2f} | {outside:.0%} | {in_model[0]:.2f} | "
                f"{report.seconds:.2f} ({report.extract_seconds:.2f}) | {rate:.0f} |"
            )
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks web", description=__doc__.split("\n")[0]
    )
    parser.add_argument("what", choices=["extract", "crawl"])
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE)
    parser.add_argument("--embeddings", default="hash", choices=["hash", "local"])
    args = parser.parse_args(argv)
    if not args.site.is_dir():
        print(f"{args.site} is missing: apt-get install python-requests-doc, or pass --site DIR")
        return 1
    print(
        extract_table(args.site)
        if args.what == "extract"
        else crawl_table(args.site, args.embeddings)
    )
    return 0
