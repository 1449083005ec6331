"""Web search through Tavily (`langchain-tavily`): search, then extract the best pages.

* The API address is configurable (`tavily_base_url`), so tests and proxies can stand in.
* Results are restricted to the allowed domains twice: Tavily is asked for `include_domains`,
  and every returned URL is checked again here (a result outside the list is dropped).
* Extracted text is cleaned: Tavily joins the passages it picked with ``[...]`` placeholders,
  and pages carry image links and runs of blank lines.
* A web document's id is the md5 of its URL, so the same page found by two queries is one
  document.

Failures never raise: `WebResult.error` says what went wrong and the answer goes on without
the web.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from vault_rag.settings import Settings

MAX_PAGE_CHARS = 3000  # per extracted page, enough for grading and answering

_PLACEHOLDER_RE = re.compile(r"\s*\[(?:\.\.\.|…)\]\s*")
_IMAGE_RE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_BLANKS_RE = re.compile(r"\n\s*\n(?:\s*\n)+")


def web_doc_id(url: str) -> str:
    return hashlib.md5(url.encode("utf-8")).hexdigest()


def clean_web_text(text: str) -> str:
    """Drop Tavily's ``[...]`` passage joins, image links and extra blank lines."""
    text = _IMAGE_RE.sub("", text or "")
    text = _PLACEHOLDER_RE.sub("\n\n", text)
    text = "\n".join(line.rstrip() for line in text.splitlines())
    text = _BLANKS_RE.sub("\n\n", text).strip()
    if len(text) > MAX_PAGE_CHARS:
        cut = text.rfind("\n", 0, MAX_PAGE_CHARS)
        text = text[: cut if cut > MAX_PAGE_CHARS // 2 else MAX_PAGE_CHARS].rstrip() + " …"
    return text


def domain_allowed(url: str, include_domains: list[str]) -> bool:
    """True when no restriction is set or the URL's host is one of the domains or under one."""
    if not include_domains:
        return True
    host = (urlparse(url).hostname or "").lower().rstrip(".")
    for domain in include_domains:
        wanted = domain.strip().lower()
        if "//" in wanted:
            wanted = urlparse(wanted).hostname or wanted
        wanted = wanted.split("/", 1)[0].strip(".")
        if host == wanted or host.endswith("." + wanted):
            return True
    return False


@dataclass
class WebPage:
    id: str
    url: str
    title: str
    text: str
    score: float


@dataclass
class WebResult:
    pages: list[WebPage] = field(default_factory=list)
    error: str = ""
    dropped_off_domain: int = 0


@dataclass
class WebSearch:
    api_key: str
    base_url: str | None = None
    include_domains: list[str] = field(default_factory=list)
    max_results: int = 5
    extract_top: int = 3

    def _tool_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"tavily_api_key": self.api_key}
        if self.base_url:
            options["api_base_url"] = self.base_url.rstrip("/")
        return options

    async def search(self, query: str) -> WebResult:
        from langchain_tavily import TavilyExtract, TavilySearch

        search = TavilySearch(
            max_results=self.max_results,
            include_domains=self.include_domains or None,
            **self._tool_options(),
        )
        try:
            found = await search.ainvoke({"query": query})
        except Exception as exc:  # the tool wraps most errors itself; be safe anyway
            return WebResult(error=f"web search failed: {exc}")
        if isinstance(found, str):  # the tool's "no results" message
            return WebResult()
        if not isinstance(found, dict) or "error" in found:
            problem = found.get("error") if isinstance(found, dict) else found
            return WebResult(error=f"web search failed: {problem}")
        hits = [r for r in found.get("results") or [] if r.get("url")]
        allowed = [r for r in hits if domain_allowed(r["url"], self.include_domains)]
        result = WebResult(dropped_off_domain=len(hits) - len(allowed))
        allowed.sort(key=lambda r: -float(r.get("score") or 0.0))
        chosen = allowed[: self.extract_top]
        extracted: dict[str, str] = {}
        if chosen:
            extract = TavilyExtract(**self._tool_options())
            try:
                pages = await extract.ainvoke({"urls": [r["url"] for r in chosen], "query": query})
            except Exception as exc:
                pages = {"error": exc}
            if isinstance(pages, dict) and "error" not in pages:
                for page in pages.get("results") or []:
                    if page.get("url") and page.get("raw_content"):
                        extracted[page["url"]] = page["raw_content"]
            elif isinstance(pages, dict):
                result.error = f"web extract failed: {pages['error']}"
        for hit in chosen:
            text = clean_web_text(extracted.get(hit["url"]) or hit.get("content") or "")
            if not text:
                continue
            result.pages.append(
                WebPage(
                    id=web_doc_id(hit["url"]),
                    url=hit["url"],
                    title=str(hit.get("title") or hit["url"]),
                    text=text,
                    score=float(hit.get("score") or 0.0),
                )
            )
        return result


def build_web_search(settings: Settings, include_domains: list[str]) -> WebSearch | None:
    """The web search client, or None when no Tavily key is configured."""
    if settings.tavily_api_key is None or not settings.tavily_api_key.get_secret_value():
        return None
    return WebSearch(
        api_key=settings.tavily_api_key.get_secret_value(),
        base_url=settings.tavily_base_url,
        include_domains=list(include_domains),
        max_results=settings.web_max_results,
    )
