"""Remote images in answers become plain links (issue 13, item 9; issue 31, defect 4).

The hostile corpus (shared-schemas/fixtures/hostile-markdown.json) is run here and by the
plugin's vitest suite. The check is by rendering, not by pattern: the output is rendered with
markdown-it (raw HTML on, GFM tables) and the HTML is parsed; no element may load a remote URL.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from vault_rag.graph.safe_markdown import StreamNeutralizer, neutralize

CORPUS = json.loads(
    (Path(__file__).parent.parent / "shared-schemas/fixtures/hostile-markdown.json").read_text(
        "utf-8"
    )
)["cases"]
RENDER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
# What a browser fetches by itself when the element is shown (never `<a href>`: a click).
LOADS = {"src", "srcset", "data", "poster", "background", "lowsrc", "dynsrc", "xlink:href"}
HREF_LOADS = {"link", "base", "image", "use", "feimage", "script"}
LOCAL = re.compile(r"^(?![a-zA-Z][a-zA-Z0-9+.-]*:|[/\\]{2})|^data:", re.IGNORECASE)


class Rendered(HTMLParser):
    """Every loading attribute that points outside the vault, and every link, in some HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loads: list[str] = []
        self.links: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            value = (value or "").strip()
            urls = (
                [p.split()[0] for p in value.split(",") if p.strip()]
                if "srcset" in name
                else [value]
            )
            if name in LOADS or "srcset" in name or (name == "href" and tag in HREF_LOADS):
                self.loads += [f"<{tag} {name}={u}>" for u in urls if u and not LOCAL.match(u)]
            if name == "style" and "url(" in value.lower():
                self.loads.append(f"<{tag} style={value}>")
            if tag == "a" and name == "href":
                self.links.append(unquote(value))
        if tag in ("style", "meta"):
            self.loads.append(f"<{tag}>")

    handle_startendtag = handle_starttag


def rendered(markdown: str) -> Rendered:
    page = Rendered()
    page.feed(RENDER.render(markdown))
    page.close()
    return page


def assert_loads_nothing(markdown: str) -> None:
    assert rendered(markdown).loads == [], markdown


def test_the_check_sees_remote_loads_in_every_hostile_input():
    """The corpus is hostile: rendered as it is, each input loads something (the check can fail)."""
    for case in CORPUS:
        page = rendered(case["input"])
        assert (page.loads == []) is bool(case.get("unchanged")), case["name"]


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_the_output_loads_nothing_remote_and_keeps_what_it_should(case):
    out = neutralize(case["input"])
    assert_loads_nothing(out)
    page = rendered(out)
    for url in case.get("links", []):
        assert url in page.links, (case["name"], out)
    for text in case.get("survive", []):
        assert text in out, (case["name"], out)
    if case.get("unchanged"):
        assert out == case["input"]


@pytest.mark.parametrize(
    "raw",
    [
        "![q](<https://evil.example/q k.png>)",
        "![pic]\n\n[pic]: https://evil.example/p.png",
        "![pic][]\n\n[pic]: https://evil.example/p.png",
        "![a][b]\n\n[b]: https://evil.example/p.png",
        "![a\nb](https://evil.example/p.png)",
        "![a [b [c]]](https://evil.example/p.png)",
        "![a \\] b](https://evil.example/p.png)",
        '<img alt="a>b" src="https://evil.example/p.png">',
        "![e](&#104;ttps://evil.example/p.png)",
    ],
)
def test_each_form_of_issue_31_is_neutralized(raw):
    """Each form got past the regexes (issue 31, defect 4): it loaded when rendered."""
    assert rendered(raw).loads
    assert_loads_nothing(neutralize(raw))


def test_a_definition_arriving_after_its_image_was_shown_loads_nothing():
    stream = StreamNeutralizer()
    shown = stream.feed("Here: ![pic] and more.\n\n")
    shown += stream.feed("Another paragraph.\n\n")
    assert "![pic]" not in shown.replace("\\![pic]", "")
    shown += stream.feed("[pic]: https://evil.example/late.png\n") + stream.flush()
    assert_loads_nothing(shown)
    assert "https://evil.example/late.png" in rendered(shown).links


def test_images_become_links_the_user_may_click():
    assert neutralize("![chart](https://evil.example/x.png?q=1)") == (
        "\\![chart](https://evil.example/x.png?q=1)"
    )
    assert neutralize('<img src="https://evil.example/i.png" alt="pic">') == (
        "[pic](https://evil.example/i.png)"
    )
    assert neutralize('<iframe src="https://e.example/f"></iframe>') == (
        "[https://e.example/f](https://e.example/f)"
    )


def test_text_with_nothing_remote_is_returned_unchanged():
    text = "# T\n\n![[a.png]] ![b](b.png) <img src=c.png> `![x](https://e/x)` [l](https://e)\n"
    assert neutralize(text) is text or neutralize(text) == text


def _stream(pieces: list[str], stream: StreamNeutralizer | None = None) -> tuple[str, list[str]]:
    stream = stream or StreamNeutralizer()
    prefixes, shown = [], ""
    for piece in pieces:
        shown += stream.feed(piece)
        prefixes.append(shown)
    shown += stream.flush()
    return shown, prefixes


def _cut(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.sampled_from(range(len(CORPUS))), min_size=1, max_size=5),
    joins=st.lists(st.sampled_from([" ", "\n", "\n\n", " and "]), min_size=5, max_size=5),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40),
)
def test_a_stream_of_corpus_pieces_cut_anywhere_shows_nothing_remote(picks, joins, cuts):
    text = "".join(CORPUS[i]["input"] + joins[n] for n, i in enumerate(picks))
    pieces = _cut(text, cuts)
    note(repr(pieces))
    stream = StreamNeutralizer()
    shown, prefixes = _stream(pieces, stream)
    for prefix in prefixes:  # what the client had rendered at each moment
        assert_loads_nothing(prefix)
    assert_loads_nothing(shown)
    if not stream.fell_back:  # the escaping fallback is safe but no longer equal (documented)
        assert shown == neutralize(text)


def test_the_stream_that_could_not_match_falls_back_safely():
    """A case hypothesis found: the HTML across lines in a quote could not be shown as a
    prefix of `neutralize` of the whole, so the stream escaped the rest instead."""
    pieces = [
        "> see <img\n> src=https://evil.example/q.png>\n\n>",
        " see <img\n> src=https://evil.example/q.png> Look: ![q](<https://evil.example/q k.png>)"
        ' here <img\nalt="x"\nsrc="https://evil.example/lines.png"> ',
    ]
    stream = StreamNeutralizer()
    shown, prefixes = _stream(pieces, stream)
    for prefix in [*prefixes, shown]:
        assert_loads_nothing(prefix)
    assert "evil.example/lines.png" in shown  # the URL is still there to read


def test_a_stream_one_character_at_a_time_gives_the_whole_text():
    text = "\n\n".join(case["input"] for case in CORPUS[:20])
    shown, prefixes = _stream(list(text))
    assert shown == neutralize(text)
    for prefix in prefixes[::7]:
        assert_loads_nothing(prefix)


def test_reset_forgets_what_was_held():
    stream = StreamNeutralizer()
    assert stream.feed("draft ![x](https://evil.example/") == "draft "
    stream.reset()
    assert stream.feed("clean text") + stream.flush() == "clean text"
