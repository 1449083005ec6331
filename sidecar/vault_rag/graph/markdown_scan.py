"""Where a markdown text would fetch something remote, found by parsing it (issue 31, defect 4).

The text is parsed with markdown-it (CommonMark with raw HTML, GFM tables and strikethrough),
as a renderer would, and the raw HTML it holds with the standard library's HTML parser. What
would load by itself when shown is a `Hazard`:

- an `image` token whose `src` (after markdown-it's own entity decoding) is remote: any scheme
  but `data:`, or `//host` (`is_remote`). Every reference-style image (`![x]`, `![x][]`,
  `![x][y]`) counts as remote whatever its definition: in a stream the definition may arrive
  after the image was shown. The parse resolves every reference label to a remote target to
  find them (`_AnyReference`); `![[wikilink embeds]]` can never name a definition and stay
  local;
- an HTML start tag with a remote `src`, `srcset`, `data`, `poster`, `background`… (`href` on
  tags that load it: `link`, `base`, `image`, `use`…), a `style` attribute that loads
  (`url(`, `@import`, `image-set(`), or a `style`/`meta` tag.

Each hazard carries its place in the source (`start`, `end`) when that place is known for sure,
else `None`: the caller then treats the hazard's whole block (`lines`) conservatively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_URL_NOISE = re.compile(r"[\t\n\r]")
_LOADING_STYLE = re.compile(r"url\s*\(|@import|image-set\s*\(|image\s*\(", re.IGNORECASE)
# Attributes a browser loads by itself on any tag; `href` only on the tags listed after.
_LOADED = {
    "src",
    "srcset",
    "imagesrcset",
    "data",
    "poster",
    "background",
    "lowsrc",
    "dynsrc",
    "xlink:href",
    "codebase",
    "archive",
    "manifest",
}
_HREF_LOADED = {"link", "base", "image", "use", "feimage", "script", "img", "iframe", "embed"}
_ALWAYS = {"style", "meta"}  # no URL to show: the tag is shown as text
CONTAINERS = {"iframe", "video", "audio", "object", "picture", "svg"}
REF_TARGET = "//reference.invalid/"  # where `_AnyReference` points every reference


def is_remote(url: str) -> bool:
    """Would `url` (an image or tag source) be fetched from elsewhere than the vault?"""
    url = _URL_NOISE.sub("", url).strip(" \x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c")
    url = url.strip("".join(chr(c) for c in range(0x0E, 0x21)))
    if url[:2] in ("//", "\\\\", "/\\", "\\/"):
        return True
    scheme = _SCHEME.match(url)
    return scheme is not None and scheme.group(0).lower() != "data:"


class _AnyReference(dict[str, Any]):
    """References in which every label but `[…]` (a wikilink) names a remote target."""

    def get(self, label: str, default: Any = None) -> Any:
        if label.startswith("[") and label.endswith("]"):
            return super().get(label, default)
        return {"href": REF_TARGET, "title": ""}


def _recording(rule: Any) -> Any:
    """`rule` that notes, on the token it pushed, where in the inline text it started."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        found = bool(rule(state, silent))
        if found and not silent and len(state.tokens) > count:
            state.tokens[-1].meta["at"] = start
        return found

    return wrapped


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    for name in ("image", "html_inline"):
        index = md.inline.ruler.__find__(name)
        md.inline.ruler.at(name, _recording(md.inline.ruler.__rules__[index].fn))
    return md


_MD = _parser()


@dataclass(frozen=True)
class Hazard:
    """Something that would load remote content: its block's `lines` and its own place."""

    lines: tuple[int, int]  # [first, last) source lines of its block
    start: int | None  # offset in the source, None when not known for sure
    end: int | None
    replacement: str  # what replaces source[start:end] ("\\!" for an image's "!")
    closing: str = ""  # a container tag whose first closing tag after it goes too


@dataclass(frozen=True)
class Tag:
    """An HTML start tag: its name, raw text, offset in the scanned text and its link."""

    name: str
    text: str
    offset: int
    url: str | None  # the remote URL it loads (shown as a link), None for a style/meta tag
    label: str


class _TagScanner(HTMLParser):
    def __init__(self, text: str, every: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.every = every
        self.tags: list[Tag] = []
        self.ends: list[tuple[str, int]] = []
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = loading_tag(tag, attrs)
        if found is None and self.every:
            found = (None, "")
        if found is not None:
            url, label = found
            text = self.get_starttag_text() or ""
            self.tags.append(Tag(tag, text, self._offset(), url, label))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.ends.append((tag, self._offset()))


def loading_tag(tag: str, attrs: list[tuple[str, str | None]]) -> tuple[str | None, str] | None:
    """(remote URL or None, label) when a tag named `tag` with `attrs` loads by itself."""
    values = {name.lower(): value or "" for name, value in reversed(attrs)}
    label = values.get("alt") or values.get("title") or ""
    urls: list[str] = []
    for name, value in attrs:
        name = name.lower()
        if name in ("srcset", "imagesrcset"):
            urls += [part.strip().split()[0] for part in (value or "").split(",") if part.strip()]
        elif name in _LOADED or (name == "href" and tag in _HREF_LOADED):
            urls.append((value or "").strip())
    remote = [url for url in urls if url and is_remote(url)]
    if remote:
        return remote[0], label
    if tag in _ALWAYS or _LOADING_STYLE.search(values.get("style", "")):
        return None, label
    return None


def scan_tags(html: str, every: bool = False) -> tuple[list[Tag], list[tuple[str, int]]]:
    """The loading start tags in `html` (`every` one), and every closing tag (name, offset)."""
    scanner = _TagScanner(html, every)
    scanner.feed(html)
    scanner.close()
    return scanner.tags, scanner.ends


def escape_label(label: str) -> str:
    """`label` as link text that cannot open an image, a tag, a code span or another link."""
    return re.sub(r"([\\\[\]<>`])", r"\\\1", label)


def link(label: str, url: str) -> str:
    """A markdown link to `url` that cannot itself become an image or a tag."""
    url = _URL_NOISE.sub("", url)
    label = escape_label(re.sub(r"\s+", " ", label).strip() or url)
    if re.fullmatch(r"[^\s<>()\\]+", url):
        return f"[{label}]({url})"
    return "[" + label + "](<" + re.sub(r"([\\<>])", r"\\\1", url) + ">)"


def parse(text: str, references: bool) -> list[Token]:
    """markdown-it's tokens for `text`; with `references`, every label resolves (remote)."""
    env: dict[str, Any] = {"references": _AnyReference()} if references else {}
    return _MD.parse(text, env)


def hazards(text: str, every: bool = False) -> list[Hazard]:
    """Every remote image and loading tag in `text` (see the module doc).

    With `every`, every image and every start tag, loading or not: what the text holds.
    """
    newlines = [i + 1 for i, c in enumerate(text) if c == "\n"]
    starts = [0, *newlines, *[len(text)] * 2]
    found: dict[tuple[int | None, int | None, str], Hazard] = {}
    for references in (True, False):
        tokens = parse(text, references)
        groups: dict[tuple[int, int], list[Token]] = {}
        where = (0, 0)
        for token in tokens:
            if token.map:
                where = (token.map[0], token.map[1])
            if token.type == "inline":  # a table cell's text may have no map: its row's lines
                groups.setdefault(where, []).append(token)
            elif token.type == "html_block" and token.map:
                lines = (token.map[0], token.map[1])
                source = text[starts[lines[0]] : starts[min(lines[1], len(starts) - 1)]]
                for hazard in _html_hazards(token.content, source, starts[lines[0]], lines, every):
                    found.setdefault((hazard.start, hazard.end, hazard.replacement), hazard)
        for lines, inlines in groups.items():
            source = text[starts[lines[0]] : starts[min(lines[1], len(starts) - 1)]]
            for hazard in _inline_hazards(inlines, source, starts[lines[0]], lines, every):
                found.setdefault((hazard.start, hazard.end, hazard.replacement), hazard)
    return sorted(found.values(), key=lambda h: (h.lines, h.start or 0))


def _nth(haystack: str, needle: str, n: int) -> int:
    at = -1
    for _ in range(n + 1):
        at = haystack.find(needle, at + 1)
        if at == -1:
            return -1
    return at


def _inline_hazards(
    inlines: list[Token], source: str, base: int, lines: tuple[int, int], every: bool
) -> list[Hazard]:
    content = "".join(token.content for token in inlines)
    exact = content.count("![") == source.count("![") and content.count("<") == source.count("<")
    out: list[Hazard] = []
    offset = 0
    for token in inlines:
        for child in token.children or []:
            at = child.meta.get("at")
            where = None if at is None or not exact else offset + at
            src = str(child.attrGet("src") or "")
            if child.type == "image" and (every or is_remote(src)):
                pos = None
                if where is not None and content.startswith("![", where):
                    pos = _nth(source, "![", content.count("![", 0, where))
                if every:
                    out.append(Hazard(lines, *_span(pos, base, 1), "image"))
                elif not child.children and pos is not None and source.startswith("![](", pos):
                    label = "\\![" + escape_label(child.attrGet("src") or "") + "]"
                    out.append(Hazard(lines, *_span(pos, base, 3), label))  # no alt: the URL
                else:
                    out.append(Hazard(lines, *_span(pos, base, 1), "\\!"))
            elif child.type == "html_inline":
                for tag in scan_tags(child.content, every)[0]:
                    pos = None
                    if where is not None and tag.offset == 0 and content.startswith("<", where):
                        pos = _nth(source, "<", content.count("<", 0, where))
                        if pos != -1 and not source.startswith(tag.text, pos):
                            pos = None
                    out.append(_tag_hazard(tag, pos, base, lines))
        offset += len(token.content)
    return out


def _span(pos: int | None, base: int, length: int) -> tuple[int | None, int | None]:
    if pos is None or pos < 0:
        return None, None
    return base + pos, base + pos + length


def _tag_hazard(tag: Tag, pos: int | None, base: int, lines: tuple[int, int]) -> Hazard:
    start, end = _span(pos, base, len(tag.text))
    if tag.url is None:
        return Hazard(lines, start, None if start is None else start + 1, "&lt;")
    closing = tag.name if tag.name in CONTAINERS else ""
    return Hazard(lines, start, end, link(tag.label, tag.url), closing)


def _html_hazards(
    content: str, source: str, base: int, lines: tuple[int, int], every: bool
) -> list[Hazard]:
    exact = source.startswith(content) or source == content.rstrip("\n")
    out = []
    for tag in scan_tags(content, every)[0]:
        pos = tag.offset if exact and source.startswith(tag.text, tag.offset) else None
        out.append(_tag_hazard(tag, pos, base, lines))
    return out
