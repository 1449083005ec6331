"""Question sets for `vault-rag eval`: JSON Lines, one question per line.

Each line is an object with `id`, `question`, `gold` (vault-relative note paths; any one of
them answers the question), optional `gold_heading` (the heading text, or a heading path
`A > B`, of the answering section), `kind` and `lang`. A question with `gold: []` is off
topic: the vault does not answer it, so retrieval metrics skip it (it is counted apart).

Code sources beside the vault (issue 27): a gold item `leveldb:db/db_impl.cc` is the file
`db/db_impl.cc` of the source named `leveldb` (a vault note's name cannot hold `:`);
`gold_symbol` (a name, or a list of alternatives, like `DBImpl::Write`) is the symbol that
answers, in a gold file; `gold_all: true` says every gold item is needed (a note and a code
file together), not any one of them.

Every problem in a file is reported at once, with its file and line, before anything runs.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KINDS = (
    "lexical",
    "paraphrase",
    "colloquial",
    "cross-lingual",
    "embed-only",
    "multi-aspect",
    "code",
    "off_topic",
)
OFF_TOPIC = "off_topic"
SOURCE_SEP = ":"  # `source:path`: a file of a source beside the vault


def source_key(collection: str, path: str) -> str:
    """How a result from a source beside the vault is named in gold (`leveldb:db/c.cc`)."""
    return f"{collection}{SOURCE_SEP}{path}"


class QAError(ValueError):
    """A question file cannot be used; the message lists every bad line."""


@dataclass(frozen=True)
class QAItem:
    id: str
    question: str
    gold: tuple[str, ...]  # alternatives: a result from any of these notes answers it
    gold_heading: str | None = None
    gold_page: int | None = None  # a PDF answer: the 1-based page of the first gold file
    kind: str = "unspecified"
    lang: str | None = None
    source: str = ""  # "file:line", for messages
    gold_symbols: tuple[str, ...] = ()  # a code answer: its symbol (alternatives)
    gold_all: bool = False  # every gold item is needed, not any one

    @property
    def off_topic(self) -> bool:
        return not self.gold


def normalize_path(path: str) -> str:
    """How a gold path is compared with a note path: NFC, forward slashes, no leading `./`."""
    text = unicodedata.normalize("NFC", path.strip()).replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text


def load_qa(files: Sequence[Path], notes: Iterable[str] | None = None) -> list[QAItem]:
    """Read and check question files. `notes` (the vault's note paths, and each source's files
    as `source:path`), when given, is used to check that every gold item exists, so a typo is
    an error rather than a silent miss."""
    known = {normalize_path(n) for n in notes} if notes is not None else None
    items: list[QAItem] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for file in files:
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{file}: cannot read it ({exc})")
            continue
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{file}:{number}"
            try:
                item = _parse(json.loads(line), where, known)
            except json.JSONDecodeError as exc:
                problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            except QAError as exc:
                problems.append(str(exc))
                continue
            if item.id in seen:
                problems.append(f"{where}: id {item.id!r} already used at {seen[item.id]}")
                continue
            seen[item.id] = where
            items.append(item)
    if problems:
        shown = problems[:30]
        more = f"\n… and {len(problems) - 30} more" if len(problems) > 30 else ""
        raise QAError("bad question file(s):\n" + "\n".join(shown) + more)
    if not items:
        raise QAError("no questions in " + ", ".join(str(f) for f in files))
    return items


def _parse(raw: Any, where: str, known: set[str] | None) -> QAItem:
    if not isinstance(raw, dict):
        raise QAError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    qid, question = raw.get("id"), raw.get("question")
    if not isinstance(qid, str | int) or isinstance(qid, bool) or not str(qid).strip():
        raise QAError(f"{where}: `id` must be a non-empty string")
    if not isinstance(question, str) or not question.strip():
        raise QAError(f"{where}: `question` must be a non-empty string")
    gold = raw.get("gold")
    if not isinstance(gold, list) or not all(isinstance(g, str) and g.strip() for g in gold):
        raise QAError(f"{where}: `gold` must be a list of note paths ([] for off-topic)")
    paths = tuple(dict.fromkeys(normalize_path(g) for g in gold))
    for path in paths:
        if path.startswith("/") or ".." in path.split("/"):
            raise QAError(f"{where}: gold {path!r} must be a path inside the vault")
        if known is not None and path not in known:
            what = "file" if SOURCE_SEP in path else "note"
            place = "its source's index" if SOURCE_SEP in path else "the vault"
            raise QAError(f"{where}: gold {what} {path!r} is not in {place}")
    kind = raw.get("kind", "unspecified" if paths else OFF_TOPIC)
    if not isinstance(kind, str) or (kind not in KINDS and kind != "unspecified"):
        raise QAError(f"{where}: `kind` must be one of {', '.join(KINDS)}, not {kind!r}")
    if (kind == OFF_TOPIC) != (not paths):
        raise QAError(f"{where}: off_topic questions, and only they, have `gold: []`")
    heading = raw.get("gold_heading")
    if heading is not None and (not isinstance(heading, str) or not heading.strip()):
        raise QAError(f"{where}: `gold_heading` must be a non-empty string when given")
    page = raw.get("gold_page")
    if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 1):
        raise QAError(f"{where}: `gold_page` must be a page number (1 or more) when given")
    lang = raw.get("lang")
    if lang is not None and not isinstance(lang, str):
        raise QAError(f"{where}: `lang` must be a string")
    symbols = raw.get("gold_symbol", [])
    symbols = [symbols] if isinstance(symbols, str) else symbols
    if not isinstance(symbols, list) or not all(isinstance(x, str) and x.strip() for x in symbols):
        raise QAError(f"{where}: `gold_symbol` must be a symbol name or a list of them")
    if symbols and not any(SOURCE_SEP in path for path in paths):
        raise QAError(f"{where}: `gold_symbol` needs a code file (`source:path`) in `gold`")
    gold_all = raw.get("gold_all", False)
    if not isinstance(gold_all, bool) or (gold_all and len(paths) < 2):
        raise QAError(f"{where}: `gold_all` must be true or false, and true needs 2+ gold items")
    # Other fields (a comment, a source) are allowed and ignored.
    return QAItem(
        id=str(qid).strip(),
        question=question.strip(),
        gold=paths,
        gold_heading=heading.strip() if heading else None,
        gold_page=page,
        kind=kind,
        lang=lang,
        source=where,
        gold_symbols=tuple(x.strip() for x in symbols),
        gold_all=gold_all,
    )
