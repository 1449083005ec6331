"""Answers never fetch remote content by themselves.

An answer is markdown that the plugin renders. A remote image in it (`![x](https://…)`,
`<img src="https://…">`) would be fetched the moment the answer is shown, so a prompt-injected
web page could make an answer send the user's data to any URL (`https://evil/?q=<secret>`).
Every remote image (and inline frame, audio, video) is turned into a plain link the user may
click or not; images from the vault (`![[x.png]]`, relative paths) are left alone.

`neutralize` rewrites a whole text; `StreamNeutralizer` does the same for text arriving in
pieces (SSE deltas), holding back only an unfinished `![…](…)` or `<tag …>` until it closes.
"""

from __future__ import annotations

import re

REMOTE = r"(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//"  # https://, http://, //host (any scheme with //)
# ![alt](url "title") — the url may be wrapped in <>; alt may hold one level of brackets.
_MD_IMAGE = re.compile(
    r"!\[(?P<alt>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*<?(?P<url>" + REMOTE + r"[^\s)>]*)>?"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
# ![alt][ref] — a reference image: its definition may point anywhere; made a link.
_REF_IMAGE = re.compile(r"!\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\[([^\]\n]*)\]")
_TAG = re.compile(
    r"<(?P<tag>img|iframe|video|audio|source|embed|object|image|track|input)\b(?P<attrs>[^>]*)>",
    re.IGNORECASE,
)
# The closing tags left behind once their element became a link (they render as nothing).
_CLOSING = re.compile(r"</(?:iframe|video|audio|object)\s*>", re.IGNORECASE)
_ATTR = re.compile(
    r"""\b(?P<name>src|srcset|data|poster|href|xlink:href|alt|title)\s*=\s*"""
    r"""(?:"(?P<d>[^"]*)"|'(?P<s>[^']*)'|(?P<u>[^\s"'>]+))""",
    re.IGNORECASE,
)
_REMOTE_URL = re.compile(REMOTE)


def _link(text: str, url: str) -> str:
    label = text.strip() or url
    return f"[{label}](<{url}>)" if " " in url else f"[{label}]({url})"


def _md_image(match: re.Match[str]) -> str:
    return _link(match.group("alt"), match.group("url"))


def _tag(match: re.Match[str]) -> str:
    attrs = {
        m.group("name").lower(): m.group("d") or m.group("s") or m.group("u") or ""
        for m in _ATTR.finditer(match.group("attrs"))
    }
    srcset = attrs.get("srcset", "").strip()
    urls = [srcset.split(",")[0].split()[0]] if srcset else []
    urls += [attrs.get(name, "") for name in ("src", "data", "poster", "href", "xlink:href")]
    remote = [u for u in urls if u and _REMOTE_URL.match(u.strip())]
    if not remote:
        return match.group(0)  # a local image (vault attachment): it fetches nothing remote
    return _link(attrs.get("alt") or attrs.get("title") or "", remote[0].strip())


def neutralize(text: str) -> str:
    """`text` with every remote image, frame or media element made a plain link."""
    if "![" not in text and "<" not in text:
        return text
    text = _MD_IMAGE.sub(_md_image, text)
    text = _REF_IMAGE.sub(lambda m: f"[{m.group(1)}][{m.group(2)}]", text)
    return _CLOSING.sub("", _TAG.sub(_tag, text))


HOLD_LIMIT = 4000  # an unfinished construct longer than this is let through (as text)


class StreamNeutralizer:
    """`neutralize` over a stream: `feed` returns what can be shown now, `flush` the rest."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        cut = _unfinished_start(text)
        if cut is None or len(text) - cut > HOLD_LIMIT:
            self._held = ""
            return neutralize(text)
        self._held = text[cut:]
        return neutralize(text[:cut])

    def flush(self) -> str:
        rest, self._held = self._held, ""
        return neutralize(rest)

    def reset(self) -> None:
        self._held = ""


def _unfinished_start(text: str) -> int | None:
    """Where a `![…](…` or `<tag …` that may still become a remote image starts, if any."""
    candidates = []
    bang = text.rfind("![")
    if bang != -1 and not _closed_image(text[bang:]):
        candidates.append(bang)
    if text.endswith("!"):
        candidates.append(len(text) - 1)
    angle = text.rfind("<")
    if angle != -1 and ">" not in text[angle:]:
        candidates.append(angle)
    return min(candidates) if candidates else None


def _closed_image(tail: str) -> bool:
    """`tail` starts with `![`: is that image (or plain bracket text) complete?"""
    depth, close = 0, -1
    for i, char in enumerate(tail[2:], 2):
        if char == "[":
            depth += 1
        elif char == "]":
            if depth == 0:
                close = i
                break
            depth -= 1
    if close == -1:
        return "\n\n" in tail  # a paragraph ended: it was never an image
    after = tail[close + 1 : close + 2]
    if after == "":
        return False  # `(` or `[` may follow
    if after == "(":
        return ")" in tail[close + 1 :]
    if after == "[":
        return "]" in tail[close + 2 :]
    return True
