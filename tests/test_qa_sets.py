"""The retrieval question sets in tests/data/qa/ are well formed and point at real notes.

Cheap checks only (no model, no index): JSON per line, unique ids, known kinds and languages,
enough answerable and off-topic questions, every gold path is a note of its vault, every
`gold_heading` is a heading of the first gold note, embed-only questions really go through an
embed, and no question copies a long run of its note's text (the Help vault carries no licence).
The files of the shared vaults skip when ../shared/vaults is absent.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from vault_rag.chunking.blocks import Document, plain_title
from vault_rag.evaluation.hints import locate_hints
from vault_rag.evaluation.qa import load_qa
from vault_rag.vault.frontmatter import split_frontmatter

from conftest import shared_vault

QA_DIR = Path(__file__).parent / "data" / "qa"
# file stem -> shared vault folder name (None: the bundled sample vault)
SETS: dict[str, str | None] = {
    "sample": None,
    "help-en": "obsidian-help-en",
    "help-zh": "obsidian-help-zh",
    "ue-notes": "ue-notes-zh",
    "xlang-zh-en": "obsidian-help-en",
    "xlang-en-zh": "obsidian-help-zh",
}
# Cross-language sets (issue 28): every question in the other language than its vault's,
# at least 20, all `cross-lingual`, none off-topic (file stem -> the questions' language).
XLANG_SETS = {"xlang-zh-en": "zh", "xlang-en-zh": "en"}
XLANG_MIN_QUESTIONS = 20
KINDS = {
    "lexical",
    "paraphrase",
    "colloquial",
    "cross-lingual",
    "embed-only",
    "multi-aspect",
    "code",
    "off_topic",
}
REQUIRED_KEYS = {"id", "question", "gold", "kind", "lang"}
OPTIONAL_KEYS = {"gold_heading", "answer_hint"}
HINT_MAX = 40  # characters: a phrase of the answering line, not a copy of it
MIN_ANSWERABLE = 40
MIN_PER_KIND = 4  # every kind but off_topic, so per-kind figures mean something
# The UE vault embeds only images (its `![[Note]]` lines are syntax examples in code spans), so it
# cannot have embed-only questions.
NO_EMBED_ONLY = {"ue-notes"}
COPY_RUN = 40  # characters: a verbatim run this long from the note is a copy, not a shared term
_CJK = re.compile(r"[\u3400-\u9fff]")
_EMBED = re.compile(r"!\[\[([^\[\]|#^]*)")


def _load(stem: str) -> list[dict]:
    path = QA_DIR / f"{stem}.jsonl"
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path.name}:{number}: blank line"
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            pytest.fail(f"{path.name}:{number}: not JSON: {exc}")
    return rows


def _vault(stem: str, sample_vault: Path) -> Path:
    name = SETS[stem]
    return sample_vault if name is None else shared_vault(name)


def _headings(text: str) -> set[str]:
    """Heading titles of a note, raw and as Obsidian shows them, never from code blocks."""
    _, body, _, _ = split_frontmatter(text)
    doc = Document(body)
    titles = set()
    for block in doc.blocks:
        if block.kind == "heading":
            titles.add(doc.heading_title(block))
            titles.add(doc.tokens[block.tok + 1].content.strip())
    return titles


# PDF sets: questions over a vault built by a script from a shared vault (file stem ->
# (shared vault, the folder stored as PDFs)); their gold are PDFs with a `gold_page`.
PDF_SETS = {"pdf-help-en": ("obsidian-help-en", "Obsidian Sync")}
PDF_MIN_QUESTIONS = 20


# Code sets (issue 27): questions over a code project checked out outside the repository
# (`scripts/code_eval.py`), gold `source:path` files with `gold_symbol`; the mixed set's
# questions need a note of NOTES_VAULT and a code file together (`gold_all`). The source is
# named after the project (`code-zlib`: the held-out set over zlib, beside the sample vault).
CODE_SETS = {"code-leveldb": 25, "mixed-leveldb": 10, "code-zlib": 15}  # stem -> least questions
CODE_PROBE = {"leveldb": "db/db_impl.cc", "zlib": "deflate.c"}  # a file every checkout has
NOTES_VAULT = Path(__file__).parent / "data" / "leveldb_notes"
PROJECT = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+@[0-9a-f]{40}$")
# Web documentation sets (issue 42): checked by tests/test_web_qa.py against the installed manual.
WEB_SETS = {"web-requests"}


# Relational sets (issue 43): a relation of a symbol or file of a code project, checked by
# `scripts/graph_eval.py` against relations it greps from the checkout itself (no gold stored).
GRAPH_SETS = {"graph-leveldb": 20}  # stem -> least questions
GRAPH_RELATIONS = {"callers", "callees", "bases", "derived", "includes", "included_by"}


def test_every_set_exists():
    assert sorted(p.stem for p in QA_DIR.glob("*.jsonl")) == sorted(
        {*SETS, *PDF_SETS, *CODE_SETS, *GRAPH_SETS, *WEB_SETS}
    )


@pytest.mark.parametrize("stem", sorted(GRAPH_SETS))
def test_graph_sets_name_a_relation_and_a_subject(stem: str):
    rows = _load(stem)
    assert len(rows) >= GRAPH_SETS[stem] and len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert PROJECT.match(row["project"]) and row["relation"] in GRAPH_RELATIONS, row["id"]
        assert row.get("symbol") or row.get("path"), row["id"]
        assert set(row) <= {"id", "question", "relation", "symbol", "path", "project"}, row["id"]


@pytest.mark.parametrize("stem", sorted(CODE_SETS))
def test_code_sets_name_their_project_and_gold_files(stem: str):
    """Every line names the project at one commit; gold is `source:path` code files with
    the symbol that answers (mixed: one note of the notes vault first, then one code file, both
    needed); questions in both languages, and no copying from the notes."""
    rows = _load(stem)
    source = stem.split("-", 1)[1]
    assert len(rows) >= CODE_SETS[stem]
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({row["project"] for row in rows}) == 1 and PROJECT.match(rows[0]["project"])
    assert {row["lang"] for row in rows} == {"en", "zh"}
    for row in rows:
        where = f"{stem}:{row.get('id')}"
        assert str(row["id"]).startswith(f"{stem}-"), where
        assert bool(_CJK.search(row["question"])) == (row["lang"] == "zh"), where
        assert row["kind"] in KINDS - {"off_topic", "embed-only"}, where
        assert row["gold_symbol"] and all(isinstance(s, str) for s in row["gold_symbol"]), where
        code = [g for g in row["gold"] if g.startswith(f"{source}:")]
        notes = [g for g in row["gold"] if ":" not in g]
        assert len(code) == 1 and code[0].endswith((".cc", ".c", ".h")), where
        if stem.startswith("mixed"):
            assert row["gold_all"] is True and len(notes) == 1 and row["gold"][0] == notes[0]
            text = (NOTES_VAULT / notes[0]).read_text(encoding="utf-8")
            question = row["question"]
            for start in range(max(0, len(question) - COPY_RUN + 1)):
                assert question[start : start + COPY_RUN] not in text, f"{where} copies"
        else:
            assert not notes and "gold_all" not in row, where


@pytest.mark.parametrize("source", sorted(CODE_PROBE))
def test_code_set_gold_is_in_the_checkout(source: str):
    """When the project is checked out (`scripts/code_eval.py` puts it in the temp dir, or
    VAULT_RAG_<SOURCE> names it), every gold file exists and holds each gold symbol's name."""
    import os
    import tempfile

    stems = [stem for stem in CODE_SETS if stem.split("-", 1)[1] == source]
    commit = _load(stems[0])[0]["project"].rsplit("@", 1)[1]
    default = Path(tempfile.gettempdir()) / f"vault-rag-{source}-{commit[:10]}"
    root = Path(os.environ.get(f"VAULT_RAG_{source.upper()}", default))
    if not (root / CODE_PROBE[source]).is_file():
        pytest.skip(f"no checkout of the project at {root} (scripts/code_eval.py makes one)")
    for stem in stems:
        for row in _load(stem):
            path = next(g for g in row["gold"] if ":" in g).split(":", 1)[1]
            text = (root / path).read_text(encoding="utf-8")
            for symbol in row["gold_symbol"]:
                assert symbol.rsplit("::", 1)[-1] in text, f"{row['id']}: {symbol} not in {path}"


@pytest.mark.parametrize("stem", sorted(PDF_SETS))
def test_pdf_sets_have_page_gold_and_copy_nothing(stem: str):
    """Every question names one PDF of the converted folder and the page that answers it,
    and (when the shared vault is here) repeats no 40 characters of the note it was made
    from (scripts/help_pdfs.py)."""
    rows = _load(stem)
    assert len(rows) >= PDF_MIN_QUESTIONS
    name, folder = PDF_SETS[stem]
    for row in rows:
        where = f"{stem}:{row.get('id')}"
        assert (
            REQUIRED_KEYS | {"gold_page"}
            <= set(row)
            <= REQUIRED_KEYS
            | {
                "gold_page",
                "gold_heading",
            }
        ), where
        assert str(row["id"]).startswith(f"{stem}-"), where
        assert row["kind"] in KINDS - {"off_topic", "embed-only"}, where
        assert len(row["gold"]) == 1 and row["gold"][0].startswith(f"{folder}/"), where
        assert row["gold"][0].endswith(".pdf"), where
        assert isinstance(row["gold_page"], int) and row["gold_page"] >= 1, where
    vault = shared_vault(name)
    for row in rows:
        source = (vault / row["gold"][0]).with_suffix(".md")
        text, question = source.read_text(encoding="utf-8"), row["question"]
        for start in range(max(0, len(question) - COPY_RUN + 1)):
            assert question[start : start + COPY_RUN] not in text, f"{row['id']} copies"


@pytest.mark.parametrize("stem", sorted(SETS))
def test_rows_are_well_formed(stem: str):
    rows = _load(stem)
    ids = [row.get("id") for row in rows]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    for row in rows:
        where = f"{stem}:{row.get('id')}"
        assert REQUIRED_KEYS <= set(row) <= REQUIRED_KEYS | OPTIONAL_KEYS, where
        assert str(row["id"]).startswith(f"{stem}-"), where
        assert isinstance(row["question"], str) and row["question"].strip(), where
        assert row["kind"] in KINDS, where
        assert row["lang"] in ("en", "zh"), where
        # The language tag is what per-language figures split on: keep it honest.
        assert bool(_CJK.search(row["question"])) == (row["lang"] == "zh"), where
        gold = row["gold"]
        assert isinstance(gold, list) and all(isinstance(g, str) for g in gold), where
        assert len(gold) == len(set(gold)), where
        if row["kind"] == "off_topic":
            assert gold == [] and "gold_heading" not in row, where
        else:
            assert gold, where
        for path in gold:
            assert path.endswith(".md") and not path.startswith("/"), where
            assert path == unicodedata.normalize("NFC", path), f"{where}: {path!r} is not NFC"
        if row["kind"] == "embed-only":
            assert len(gold) >= 2, f"{where}: embed-only names the opened note and the source"
    kinds = Counter(row["kind"] for row in rows)
    if stem in XLANG_SETS:
        assert len(rows) >= XLANG_MIN_QUESTIONS and set(kinds) == {"cross-lingual"}, kinds
        assert {row["lang"] for row in rows} == {XLANG_SETS[stem]}
        return
    assert sum(n for k, n in kinds.items() if k != "off_topic") >= MIN_ANSWERABLE, kinds
    assert 3 <= kinds["off_topic"] <= 5, kinds
    for kind in KINDS - {"off_topic"}:
        if kind == "embed-only" and stem in NO_EMBED_ONLY:
            continue
        assert kinds[kind] >= MIN_PER_KIND, f"{stem}: only {kinds[kind]} {kind} questions"


@pytest.mark.parametrize("stem", sorted(SETS))
def test_gold_points_into_the_vault(stem: str, sample_vault: Path):
    vault = _vault(stem, sample_vault)
    rows = _load(stem)
    texts: dict[str, str] = {}
    problems = []
    for row in rows:
        where = f"{stem}:{row['id']}"
        missing = [path for path in row["gold"] if not (vault / path).is_file()]
        problems += [f"{where}: {path} is not a note of {vault.name}" for path in missing]
        if missing or not row["gold"]:
            continue
        for path in row["gold"]:
            texts.setdefault(path, (vault / path).read_text(encoding="utf-8"))
        first = texts[row["gold"][0]]
        heading = row.get("gold_heading")
        if heading is not None and heading not in _headings(first):
            problems.append(f"{where}: {heading!r} is not a heading of {row['gold'][0]}")
        if row["kind"] == "embed-only":
            targets = {t.strip().rsplit("/", 1)[-1].lower() for t in _EMBED.findall(first)}
            for source in row["gold"][1:]:
                if Path(source).stem.lower() not in targets:
                    problems.append(f"{where}: {row['gold'][0]} does not embed {source}")
        question = row["question"]
        for path in row["gold"]:
            text = texts[path]
            for start in range(max(0, len(question) - COPY_RUN + 1)):
                run = question[start : start + COPY_RUN]
                if run in text:
                    problems.append(f"{where}: copies {run!r} from {path}")
                    break
    assert not problems, "\n".join(problems)


def test_plain_title_strips_inline_markup():
    """The heading check accepts the title as Obsidian shows it (`code` and *emphasis* gone)."""
    assert "Use stat unit" in _headings("# Use `stat unit`\n\n```\n# not a heading\n```\n")
    assert "not a heading" not in _headings("```\n# not a heading\n```\n")
    assert plain_title("*Bold* title") == "Bold title"


@pytest.mark.parametrize("stem", sorted(SETS))
def test_answer_hints_are_short_and_found_in_a_gold_note(stem: str, sample_vault: Path):
    """A hint is a short phrase (not a copied line) that `vault-rag eval` finds in a gold
    note; one found nowhere would drop its question from the line level."""
    hinted = [row for row in _load(stem) if "answer_hint" in row]
    if not hinted:
        pytest.skip(f"{stem} has no answer_hint lines")
    for row in hinted:
        hint = row["answer_hint"]
        assert isinstance(hint, str) and 0 < len(hint.strip()) < HINT_MAX, row["id"]
    vault = _vault(stem, sample_vault)
    found, missing = locate_hints(load_qa([QA_DIR / f"{stem}.jsonl"]), vault)
    assert missing == []
    assert set(found) == {row["id"] for row in hinted}
