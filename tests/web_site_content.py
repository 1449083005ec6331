"""The documentation site the web source's tests crawl (served by `tests/fakes/web_site.py`):
pages with the chrome real docs have (navigation, search box, cookie banner, footer), a PDF,
an image, pages in odd charsets, malformed HTML, and the faults of issue 42."""

from __future__ import annotations

from pathlib import Path

from pdf_fixtures import write_pdf

from fakes.web_site import Site, dripping, endless, redirect, send, slow

CHROME_TOP = """<div id="cookie-banner">We use cookies to improve the docs. <button>Accept all
cookies</button></div><header><nav><ul><li><a href="/docs/">Home</a></li>
<li><a href="/docs/install.html">Install</a></li><li><a href="/docs/config.html">Config</a></li>
</ul></nav><form role="search"><input name="q" placeholder="Search the docs"></form></header>"""
CHROME_FOOT = """<footer><p>Copyright 2026 the Widget project. Privacy policy. Built with
Sphinx.</p></footer>"""


def html(title: str, body: str, *, head: str = '<meta charset="utf-8">') -> str:
    return (
        f"<!DOCTYPE html><html><head>{head}<title>{title} — Widget docs</title></head><body>"
        f"{CHROME_TOP}<main>{body}</main>{CHROME_FOOT}</body></html>"
    )


INDEX = html(
    "Widget documentation",
    """<section id="welcome"><h1>Widget documentation<a class="headerlink"
    href="#welcome">¶</a></h1><p>Widget is an engine that frobnicates widgets. Start with the
    installation guide, then read about configuration.</p>
    <ul><li><a href="install.html">Installation</a></li><li><a href="config.html">Configuration
    </a></li><li><a href="manual.pdf">The printable manual</a></li><li><a href="logo.png">Logo
    </a></li><li><a href="latin1.html">Legacy page</a></li><li><a href="wrong.html">中文页面</a>
    </li><li><a href="malformed.html">Malformed</a></li><li><a href="private/secret.html">Private
    </a></li><li><a href="https://example.invalid/elsewhere">Elsewhere</a></li>
    <li><a href="/blog/post.html">Blog, outside the docs folder</a></li></ul></section>""",
)
INSTALL = html(
    "Installation",
    """<section id="installation"><h1>Installation<a class="headerlink"
    href="#installation">¶</a></h1><p>Widget installs with pip and needs Python 3.11.</p>
    <section id="from-pypi"><h2>From PyPI<a class="headerlink" href="#from-pypi">¶</a></h2>
    <p>Install the zanzibar wheel from PyPI with this command:</p>
    <pre><code>pip install widget-zanzibar
widget --version</code></pre></section>
    <section id="troubleshooting"><h2>Troubleshooting</h2><p>When the quokka compiler is
    missing, the speedups are skipped and a warning is printed.</p>"""
    + "<p>"
    + " ".join(
        f"Step {i}: check the build log, the compiler path and the environment again."
        for i in range(12)
    )
    + """</p></section></section>""",
)
CONFIG = html(
    "Configuration",
    """<h1 id="configuration">Configuration</h1><p>The frobnicator reads widget.toml.</p>
    <h2 id="options">Options</h2><table><thead><tr><th>Option</th><th>Default</th></tr></thead>
    <tbody><tr><td>frob_level</td><td>3</td></tr><tr><td>marmalade_mode</td><td>off</td></tr>
    </tbody></table><p>Restart the engine after changing an option.</p>""",
)
LATIN1 = (
    "<html><head><title>Legacy café page</title></head><body><main><h1>Legacy café</h1>"
    "<p>The crème brûlée setting controls the naïve façade of the widget renderer.</p></main>"
    "</body></html>"
).encode("latin-1")
WRONG = html(
    "中文说明",
    "<h1>中文说明</h1><p>部件引擎的配置文件是 widget.toml，修改后需要重启引擎才能生效。</p>",
).encode("utf-8")
MALFORMED = (
    "<html><head><title>Malformed page</title><body><div><main><h1>Malformed <b>page</h1>"
    "<p>The pangolin parameter sets the <i>scale of the widget grid, in cells per row.<p>"
    "Unclosed paragraphs, a stray </span> and unclosed tags still count as text here.<table>"
    "<tr><td>cell one<td>cell two</table></div></main>"
)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def docs_site(site: Site, tmp: Path) -> None:
    """The whole site, faults included, under /docs/."""
    site.page("/robots.txt", "User-agent: *\nDisallow: /docs/private/\n", content_type="text/plain")
    site.page(
        "/docs/sitemap.xml",
        "<?xml version='1.0'?><urlset><url><loc>"
        + site.url("/docs/from-sitemap.html")
        + "</loc></url></urlset>",
        content_type="application/xml",
    )
    site.page(
        "/docs/llms.txt", "# Widget\n\n- [Extra](from-llms.html): more\n", content_type="text/plain"
    )
    site.page("/docs/", INDEX, headers={"Set-Cookie": "session=abc; Path=/"})
    site.page("/docs/install.html", INSTALL)
    site.page("/docs/config.html", CONFIG)
    site.page("/docs/latin1.html", LATIN1, content_type="text/html")
    site.page("/docs/wrong.html", WRONG, content_type="text/html; charset=iso-8859-1")
    site.page("/docs/malformed.html", MALFORMED, content_type="text/html")
    site.page("/docs/logo.png", PNG, content_type="image/png")
    site.page("/docs/private/secret.html", html("Secret", "<p>never fetched</p>"))
    site.page(
        "/docs/from-sitemap.html",
        html(
            "Sitemap only", "<h1>Sitemap only</h1><p>The axolotl page is listed in the sitemap.</p>"
        ),
    )
    site.page(
        "/docs/from-llms.html",
        html("Llms only", "<h1>Llms only</h1><p>The narwhal page is listed in llms.txt.</p>"),
    )
    pdf = write_pdf(
        tmp / "manual.pdf",
        [("Printing", ["The printable manual explains the okapi printing pipeline in depth."])],
        title="Widget manual",
    )
    site.page("/docs/manual.pdf", pdf.read_bytes(), content_type="application/pdf")


def fault_site(site: Site) -> dict[str, int]:
    """Pages that fail, linked from /docs/faults.html; returns the 429 counter."""
    counter = {"busy": 0}
    links = [
        "away.html", "loop-a.html", "missing.html", "broken.html", "busy.html", "slow.html",
        "endless.html", "drip.html", "huge.html",
    ]  # fmt: skip
    site.page(
        "/docs/faults.html",
        html("Faults", "<h1>Faults</h1><p>Links that fail.</p>"
             + "".join(f'<a href="{link}">{link}</a> ' for link in links)),
    )  # fmt: skip
    site.handle("/docs/away.html", redirect("https://example.invalid/docs/"))
    site.handle("/docs/loop-a.html", redirect("/docs/loop-b.html"))
    site.handle("/docs/loop-b.html", redirect("/docs/loop-a.html"))
    site.handle("/docs/broken.html", lambda h: send(h, 500, b"oops", "text/plain"))

    def busy(handler) -> None:
        counter["busy"] += 1
        if counter["busy"] == 1:
            send(handler, 429, b"slow down", "text/plain", {"Retry-After": "1"})
        else:
            send(
                handler,
                200,
                html("Busy", "<h1>Busy</h1><p>The wombat page was busy once.</p>").encode(),
                "text/html",
            )

    site.handle("/docs/busy.html", busy)
    site.handle("/docs/slow.html", slow(3.0))
    site.handle("/docs/endless.html", endless)
    site.handle("/docs/drip.html", dripping)
    site.page("/docs/huge.html", html("Huge", "<p>" + "big words " * 60_000 + "</p>"))
    return counter
