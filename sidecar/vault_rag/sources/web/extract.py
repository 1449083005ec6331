"""A fetched HTML page → its main content as Markdown (headings, code blocks, tables and lists
kept; navigation, footers, search boxes and cookie banners left out), its title, its links and
the ids of its headings (for `#anchor` citations).

The main content is found by trafilatura (its Markdown output), chosen over readability-lxml +
markdownify for dropping more of the page's chrome at a like speed (docs/benchmarks.md, "Web
page extraction"). Before it runs, Sphinx-style permalink marks (`¶`) are taken out of
headings, and a section's id that is only its heading's slug (`<section id="cookies">` under
`<h2>Cookies</h2>`) is taken off: trafilatura drops any element whose id says `cookie`, `nav`,
`footer`, `share`, `related`… as chrome, which cost a documentation page its "Cookies" section
(the ids are read first, for `anchors`). The text is decoded by the header's charset, else the
page's `<meta charset>`, with valid UTF-8 preferred over a header that says Latin-1, and
windows-1252 as the last resort."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

import lxml.html
import trafilatura
from lxml import etree
from trafilatura.settings import use_config

# What the mirror's Markdown was made by: a crawl under another version fetches every page in
# full once (no If-None-Match / If-Modified-Since), so a better extraction reaches pages the
# server would answer with 304 (`crawl.py`); Markdown that comes out the same is not re-indexed.
EXTRACTOR_VERSION = "2"  # 2: section ids that are their heading's slug no longer drop it
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-:.]+)""", re.I)
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_PERMALINK = re.compile(r"[\s¶#🔗]+$")
_SPACE = re.compile(r"\s+")
# Documentation pages may be short (a glossary entry, a changelog line): keep any text found.
_CONFIG = use_config()
for _key in ("MIN_EXTRACTED_SIZE", "MIN_OUTPUT_SIZE", "MIN_EXTRACTED_COMM_SIZE"):
    _CONFIG.set("DEFAULT", _key, "1")
_CONFIG.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")  # (its signal-based timer: main thread only)


@dataclass
class Extracted:
    title: str
    markdown: str
    links: list[str] = field(default_factory=list)  # absolute hrefs, in page order
    anchors: dict[str, str] = field(default_factory=dict)  # heading key → its id
    noindex: bool = False
    nofollow: bool = False


def decode(body: bytes, content_type: str = "") -> str:
    """The page's text (see the module doc)."""
    declared = _charset(content_type)
    sniffed = _META_CHARSET.search(body[:4096])
    names = [declared, sniffed.group(1).decode("ascii") if sniffed else None]
    if not body.isascii():
        try:
            return body.decode("utf-8")  # valid UTF-8 with non-ASCII bytes is UTF-8
        except UnicodeDecodeError:
            pass
    for name in names:
        if not name:
            continue
        try:
            return body.decode(name)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("cp1252", errors="replace")


def _charset(content_type: str) -> str | None:
    match = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_\-:.]+)", content_type, re.I)
    return match.group(1) if match else None


def heading_key(text: str) -> str:
    """What a heading is matched by: its words, lower case, without permalink marks or
    Markdown emphasis (the chunker's heading path and the HTML's heading must meet)."""
    text = _PERMALINK.sub("", text.replace("¶", " "))
    text = re.sub(r"[`*_\\]", "", text)
    return _SPACE.sub(" ", text).strip().lower()


def extract(html: str, url: str) -> Extracted:
    """Main content, title, links and heading ids of one page. Malformed HTML is parsed as a
    browser would (lxml's HTML parser); a page with no main content gives empty Markdown."""
    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return Extracted(title="", markdown="")
    robots = " ".join(doc.xpath("//meta[@name='robots']/@content")).lower()
    with contextlib.suppress(ValueError):
        doc.make_links_absolute(url, resolve_base_href=True)
    links = [str(h) for h in doc.xpath("//a/@href")]
    anchors = _anchors(doc)
    title = _title(doc)
    for mark in doc.xpath("//a[contains(concat(' ', @class, ' '), ' headerlink ')]"):
        mark.drop_tree()
    _drop_heading_ids(doc)
    cleaned = lxml.html.tostring(doc, encoding="unicode")
    markdown = (
        trafilatura.extract(
            cleaned,
            url=url,
            output_format="markdown",
            include_tables=True,
            include_formatting=True,
            include_links=False,
            include_images=False,
            include_comments=False,
            favor_recall=True,
            deduplicate=False,
            config=_CONFIG,
        )
        or ""
    )
    markdown = _tidy(markdown)
    return Extracted(
        title=title,
        markdown=markdown,
        links=links,
        anchors=anchors,
        noindex="noindex" in robots,
        nofollow="nofollow" in robots,
    )


def _title(doc: lxml.html.HtmlElement) -> str:
    for path in ("//title", "//h1"):
        found = doc.xpath(path)
        if found:
            text = _SPACE.sub(" ", found[0].text_content()).strip()
            text = _PERMALINK.sub("", text)
            if text:
                return text[:300]
    return ""


def _anchors(doc: lxml.html.HtmlElement) -> dict[str, str]:
    """heading key → the id a link to that section uses: the heading's own id, else an
    anchor's inside it (`<a id>`, `<a name>`, a permalink's `href="#…"`), else the id of the
    section it opens (Sphinx's `<section id>`)."""
    found: dict[str, str] = {}
    for heading in doc.iter(*_HEADINGS):
        key = heading_key(heading.text_content())
        if not key or key in found:
            continue
        anchor = heading.get("id")
        if not anchor:
            for a in heading.iter("a"):
                href = a.get("href") or ""
                anchor = a.get("id") or a.get("name") or (href[1:] if href.startswith("#") else "")
                if "#" in href and not anchor:
                    anchor = href.split("#", 1)[1]
                if anchor:
                    break
        if not anchor:
            parent = heading.getparent()
            if parent is not None and parent.get("id"):
                first = next(iter(parent.iter(*_HEADINGS)), None)
                if first is heading:
                    anchor = parent.get("id")
        if anchor:
            found[key] = anchor
    return found


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", heading_key(text)).strip("-")


def _drop_heading_ids(doc: lxml.html.HtmlElement) -> None:
    """Take off the ids that only name a section after its heading (the module doc): a
    heading's own, and its parent's when the heading opens it. A chrome block's id
    (`cookie-banner`) is not its heading's slug and stays, for trafilatura to drop."""
    for heading in doc.iter(*_HEADINGS):
        slug = _slug(heading.text_content())
        if not slug:
            continue
        parent = heading.getparent()
        opens = parent is not None and next(iter(parent.iter(*_HEADINGS)), None) is heading
        for element in (heading, parent if opens else None):
            if element is not None and (element.get("id") or "").lower() == slug:
                del element.attrib["id"]


def _tidy(markdown: str) -> str:
    """A blank line after a closing code fence (trafilatura may glue the next block on)."""
    lines = markdown.splitlines()
    out: list[str] = []
    fenced = False
    for line in lines:
        if out and not fenced and out[-1] == "```" and line.strip():
            out.append("")
        if line.startswith("```"):
            fenced = not fenced
        out.append(line)
    text = "\n".join(out).strip()
    return text + "\n" if text else ""
