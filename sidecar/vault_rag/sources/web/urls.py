"""Web source URLs: which are accepted (`check_start_url`), which a crawl may follow (`Scope`),
and where a page is kept in the mirror folder (`mirror_path`)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote, urldefrag, urljoin, urlsplit, urlunsplit

import pathspec

_UNSAFE = re.compile(r"[^\w.\-~]+", re.UNICODE)
_SEGMENT_MAX = 80


class WebUrlError(ValueError):
    """A start URL that cannot be a web source."""


def check_start_url(url: str) -> str:
    """The start URL, normalised; refused: file://, any scheme but http(s), a URL with a user
    name or password (no credentials are ever sent), no host."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = scheme or "no scheme"
        raise WebUrlError(
            f"{url!r}: only http:// and https:// URLs can be crawled ({shown} is refused)"
        )
    if parts.username is not None or parts.password is not None:
        raise WebUrlError(f"{url!r}: a URL with a user name or password is refused")
    if not parts.hostname:
        raise WebUrlError(f"{url!r}: no host")
    return normalise(url.strip())


def normalise(url: str) -> str:
    """No fragment, lower-case scheme and host, an empty path as "/"."""
    url, _ = urldefrag(url)
    parts = urlsplit(url)
    netloc = (parts.hostname or "").lower()
    if parts.port is not None and parts.port != {"http": 80, "https": 443}.get(parts.scheme):
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


def origin(url: str) -> str:
    parts = urlsplit(normalise(url))
    return f"{parts.scheme}://{parts.netloc}"


@dataclass
class Scope:
    """What a crawl from `start` may fetch: the same origin, under the start URL's folder, and
    the source's `include`/`exclude` patterns (gitignore-style, on the URL path below the
    folder)."""

    start: str
    include: list[str]
    exclude: list[str]

    def __post_init__(self) -> None:
        self.origin = origin(self.start)
        path = urlsplit(self.start).path or "/"
        self.prefix = path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"
        self._include = pathspec.GitIgnoreSpec.from_lines(self.include) if self.include else None
        self._exclude = pathspec.GitIgnoreSpec.from_lines(self.exclude)

    def same_origin(self, url: str) -> bool:
        return origin(url) == self.origin

    def why_not(self, url: str) -> str | None:
        """None when the crawl may fetch `url`, else why not."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return "not http(s)"
        if parts.username is not None or parts.password is not None:
            return "carries credentials"
        if not self.same_origin(url):
            return "another origin"
        path = parts.path or "/"
        if not path.startswith(self.prefix) and path + "/" != self.prefix:
            return "outside the start URL's folder"
        below = path[len(self.prefix) :] or "index"
        if self._exclude.match_file(below):
            return "matches the source's `exclude` patterns"
        if self._include is not None and not self._include.match_file(below):
            return "matches none of the source's `include` patterns"
        return None

    def resolve(self, base: str, href: str) -> str | None:
        """A link's absolute, normalised URL, or None when it cannot be one."""
        href = href.strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "data:", "tel:")):
            return None
        try:
            return normalise(urljoin(base, href))
        except ValueError:
            return None


def mirror_path(url: str, *, pdf: bool = False) -> str:
    """The page's file in the mirror folder, relative, from its URL path (readable; a query
    string or an over-long name adds a short hash): `/docs/guide/` → `docs/guide/index.md`,
    `/a.html?m=3` → `a.html-<hash>.md`; a PDF keeps (or gets) `.pdf`."""
    parts = urlsplit(url)
    path = unquote(parts.path or "/")
    segments = [_safe(s) for s in path.split("/") if s not in ("", ".", "..")]
    if not segments or path.endswith("/"):
        segments.append("index")
    name = segments[-1]
    if parts.query:
        name += "-" + hashlib.sha256(parts.query.encode()).hexdigest()[:10]
    if pdf:
        name = name if name.lower().endswith(".pdf") else name + ".pdf"
    else:
        name += ".md"
    segments[-1] = name
    return "/".join(segments)


def _safe(segment: str) -> str:
    text = unicodedata.normalize("NFC", segment)
    text = _UNSAFE.sub("_", text).lstrip(".") or "_"
    if len(text) > _SEGMENT_MAX:
        text = text[:_SEGMENT_MAX] + "-" + hashlib.sha256(segment.encode()).hexdigest()[:8]
    return text
