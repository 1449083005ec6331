"""The answer without a language model: quote the best passages, each with its citation.

Deterministic and faithful by construction: every quoted line is copied verbatim from a
document, so a citation always points at text that contains the quote. For each document the
excerpt is a run of whole markdown blocks — paragraphs, list items with their children, code
blocks with both fences, tables — taken from markdown-it's tokens (`chunking.blocks`), never a
window of lines: a window can start inside a fenced code block or run list items together.
Blank lines between the blocks are kept, so the quote renders as the note does. The run chosen
shares the most terms with the question (same tokeniser as the lexical index, so Chinese and
UE identifiers count properly). A code unit (a function, method, class or struct) is quoted
whole, in a fenced block: half a function answers nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vault_rag.chunking.blocks import Block, Document
from vault_rag.graph.state import Doc
from vault_rag.index.bm25.tokenize import tokenize

NO_MODEL_NOTE = (
    "No language model is configured, so this answer quotes the most relevant passages of "
    "your notes instead of writing one (set VAULT_RAG_LLM_MODEL, and VAULT_RAG_LLM_BASE_URL "
    "for a local server, to get written answers)."
)
MAX_PASSAGES = 3
MAX_EXCERPT_CHARS = 420
# An Obsidian block id: `^id` ending a block's last line (after a space) or alone on a line.
_BLOCK_ID = re.compile(r"(^|[ \t])\^[A-Za-z0-9-]+[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Unit:
    """One quotable block: lines [start, end) of the text, trailing blank lines excluded."""

    start: int
    end: int
    heading: bool  # a heading: never quoted, and a run of quoted blocks never crosses one


def quotable_units(document: Document) -> list[Unit]:
    """Top-level blocks, with lists split into their items (each with its children). A list
    item alone renders as the same item (a one-item list), so it is the finest unit that
    still reads as the note does."""
    units: list[Unit] = []
    for block in document.blocks:
        parts: list[Block] = [block]
        if block.kind == "list":
            parts = document.children(block) or [block]
        for part in parts:
            span = document.char_range(part.start_line, part.end_line)
            if span is None:
                continue  # blank lines only
            start, end = document.line_of(span[0]), document.line_of(span[1]) + 1
            # Trailing blank lines are left out, unless they belong to a code block (an
            # unclosed fence runs to the end of the text, blank lines included).
            for first, last in document.code_lines:
                if first < end and start < last:
                    end = max(end, last)
            units.append(Unit(start, end, part.kind == "heading"))
    return units


def excerpt_lines(
    text: str, question_terms: set[str], max_chars: int = MAX_EXCERPT_CHARS
) -> tuple[int, int] | None:
    """Lines [start, end) of the run of whole blocks, at most `max_chars` long, with the most
    question terms (ties: the earliest), starting at a block that has some. A single block
    longer than the limit is still quoted whole: cutting it would open a fence it never closes
    or break a list item apart. None when the text has only headings and blank lines."""
    document = Document(text)
    lines = text.split("\n")
    units = quotable_units(document)
    if not units:
        return None
    weights = [
        0 if u.heading else len(question_terms & set(tokenize("\n".join(lines[u.start : u.end]))))
        for u in units
    ]
    best: tuple[int, int, int] | None = None  # (score, first unit, last unit)
    any_match = any(weights)
    for first, unit in enumerate(units):
        if unit.heading or (any_match and not weights[first]):
            continue  # a quote starts at a block that matches (the first one if none does)
        score = 0
        for last in range(first, len(units)):
            if units[last].heading:
                break
            size = sum(len(line) + 1 for line in lines[unit.start : units[last].end])
            if size > max_chars and last > first:
                break
            score += weights[last]
            if best is None or score > best[0]:
                best = (score, first, last)
    if best is None:
        return None
    _, first, last = best
    return units[first].start, units[last].end


def best_excerpt(text: str, question_terms: set[str], max_chars: int = MAX_EXCERPT_CHARS) -> str:
    """The excerpt `excerpt_lines` chooses, verbatim (blank lines between blocks included)."""
    span = excerpt_lines(text, question_terms, max_chars)
    if span is None:
        return ""
    return "\n".join(text.split("\n")[span[0] : span[1]])


def without_block_ids(excerpt: str) -> str:
    """The excerpt as the note reads in Obsidian: block ids (`… ^gc-pitfall`) are markers for
    links, not text, so a quote leaves them out (the citation still links to the place). Code
    blocks are quoted as they are."""
    lines: list[str] = []
    in_code = False
    for line in excerpt.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code and _BLOCK_ID.search(line):
            line = _BLOCK_ID.sub("", line)
            if not line.strip():
                continue  # a line that held only the id
        lines.append(line)
    return "\n".join(lines)


def blockquote(excerpt: str) -> str:
    """Markdown blockquote of `excerpt`: blank lines become ">" so the quote stays one. Tabs in
    a line's indentation become spaces first: after the "> " marker a tab reaches another tab
    stop, and a tab-indented code line would turn into a paragraph."""
    return "\n".join(f"> {_spaced(line)}" if line else ">" for line in excerpt.split("\n"))


def _spaced(line: str) -> str:
    body = line.lstrip(" \t")
    return line[: len(line) - len(body)].expandtabs(4) + body


def code_quote(doc: Doc) -> str:
    """A code unit's whole text as a fenced block in its language, the fence longer than any
    run of backticks inside it."""
    from vault_rag.sources.code.languages import spec_for

    text = doc["text"].rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    spec = spec_for(doc.get("note_path", ""))
    return f"{fence}{spec.name if spec is not None else ''}\n{text}\n{fence}"


def extractive_answer(
    question: str, docs: list[Doc], *, max_passages: int = MAX_PASSAGES, lead: str = ""
) -> tuple[str, list[str]]:
    """Markdown quoting the top documents (already in best-first order). Returns the text and
    the ids of the documents quoted."""
    terms = set(tokenize(question))
    parts: list[str] = [lead] if lead else []
    used: list[str] = []
    for doc in docs[:max_passages]:
        if doc.get("source_kind") == "code":
            # a code unit is one function, method, class or struct (or one part of a long
            # one): quoted whole, never cut to the lines that share words with the question
            if not doc["text"].strip():
                continue
            parts.append(f"{code_quote(doc)}\n\n— {doc['cite']}")
            used.append(doc["id"])
            continue
        excerpt = best_excerpt(doc["text"], terms)
        if not excerpt.strip():
            continue
        parts.append(f"{blockquote(without_block_ids(excerpt))}\n\n— {doc['cite']}")
        used.append(doc["id"])
    if not used:
        parts.append(f"Your notes have nothing that answers “{question}”.")
    return "\n\n".join(parts), used
