"""The web documentation question set (issue 42): `tests/data/qa/web-requests.jsonl`, over the
Requests manual as Debian's `python-requests-doc` installs it, run by `scripts/web_eval.py`
(docs/retrieval.md, "Web documentation (issue 42)").

The shape of the set is checked everywhere; that every gold page is a page of the installed
manual and every gold heading one of its headings (and still a heading once the page is
extracted, `sources/web/extract.py`) only where the package is installed: scripts/test-all.sh
installs it with apt-get; elsewhere those checks skip with the command that installs it."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import lxml.html
import pytest

from vault_rag.evaluation.qa import load_qa
from vault_rag.sources.web.extract import extract, heading_key
from vault_rag.sources.web.urls import mirror_path

QA = Path(__file__).parent / "data" / "qa" / "web-requests.jsonl"
MANUAL = Path("/usr/share/doc/python-requests-doc/html")
SOURCE = "requests"  # the source's name in scripts/web_eval.py: the prefix of every gold page
KINDS = {"lexical", "paraphrase", "colloquial", "cross-lingual", "code", "off_topic"}
MIN_ANSWERABLE, MIN_CHINESE, MIN_OFF_TOPIC = 25, 6, 2
COPY_RUN = 40  # characters: a verbatim run this long from the page is a copy
_CJK = re.compile(r"[\u3400-\u9fff]")


def _rows() -> list[dict]:
    return [json.loads(line) for line in QA.read_text(encoding="utf-8").splitlines() if line]


def _manual() -> Path:
    if not (MANUAL / "index.html").is_file():
        pytest.skip("python-requests-doc is not installed: apt-get install python-requests-doc")
    return MANUAL


def _pages(manual: Path) -> dict[str, Path]:
    """Gold page (`requests:` + the page's file in the mirror) → its HTML file. The start URL
    is the site's root, so `index.html` is crawled as `/` (`index.md`)."""
    pages = {
        f"{SOURCE}:{mirror_path('http://127.0.0.1/' + p.relative_to(manual).as_posix())}": p
        for p in manual.rglob("*.html")
    }
    pages[f"{SOURCE}:index.md"] = manual / "index.html"
    return pages


def _headings(doc: lxml.html.HtmlElement) -> list[str]:
    return [heading_key(h.text_content()) for h in doc.iter("h1", "h2", "h3", "h4", "h5", "h6")]


def test_the_set_is_well_formed() -> None:
    rows = _rows()
    assert load_qa([QA])  # the product's own checks
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids) and all(i.startswith("web-requests-") for i in ids)
    answerable = [row for row in rows if row["gold"]]
    assert len(answerable) >= MIN_ANSWERABLE
    assert len(rows) - len(answerable) >= MIN_OFF_TOPIC
    assert sum(row["lang"] == "zh" for row in answerable) >= MIN_CHINESE
    for row in rows:
        where = row["id"]
        assert set(row) <= {"id", "question", "gold", "gold_heading", "kind", "lang"}, where
        assert row["kind"] in KINDS and (row["kind"] == "off_topic") == (not row["gold"]), where
        assert row["lang"] == ("zh" if _CJK.search(row["question"]) else "en"), where
        if row["lang"] == "zh" and row["gold"]:
            assert row["kind"] == "cross-lingual", where  # Chinese over an English manual
        if row["gold"]:
            assert len(row["gold"]) == 1 and row["gold"][0].startswith(f"{SOURCE}:"), where
            assert row["gold"][0].endswith(".md") and row.get("gold_heading"), where
    kinds = Counter(row["kind"] for row in answerable)
    assert all(kinds[k] >= 4 for k in KINDS - {"off_topic"}), kinds


def test_gold_pages_and_headings_are_in_the_installed_manual() -> None:
    manual = _manual()
    pages = _pages(manual)
    for row in _rows():
        if not row["gold"]:
            continue
        where, gold = row["id"], row["gold"][0]
        assert gold in pages, f"{where}: {gold} is not a page of {manual}"
        html = pages[gold].read_text(encoding="utf-8")
        wanted = [heading_key(part) for part in row["gold_heading"].split(">")]
        found = _headings(lxml.html.document_fromstring(html))
        positions = [found.index(part) if part in found else -1 for part in wanted]
        assert -1 not in positions, f"{where}: {row['gold_heading']!r} is not a heading of {gold}"
        assert positions == sorted(positions), f"{where}: {row['gold_heading']!r} out of order"
        markdown = extract(html, "http://127.0.0.1/").markdown
        kept = {heading_key(line.lstrip("#")) for line in markdown.splitlines() if line[:1] == "#"}
        assert set(wanted) <= kept, f"{where}: extraction loses {row['gold_heading']!r}"


def test_no_question_copies_its_page() -> None:
    manual = _manual()
    pages = _pages(manual)
    for row in _rows():
        if not row["gold"]:
            continue
        text = " ".join(
            lxml.html.document_fromstring(pages[row["gold"][0]].read_text("utf-8"))
            .text_content()
            .split()
        ).lower()
        question = " ".join(row["question"].split()).lower()
        runs = (question[i : i + COPY_RUN] for i in range(len(question) - COPY_RUN + 1))
        assert not any(run in text for run in runs), f"{row['id']} copies its page"
