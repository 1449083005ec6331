"""Typo check: ask the chat model for likely typos in each note and write a report.

Notes are read, never written. Each note goes to the model in numbered line batches
(frontmatter and fenced code left out: identifiers there are not typos). Every suspect the
model names must literally occur on the line it gives, or on another line of the batch, or it
is dropped: a small model's invented findings never reach the report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from vault_rag.graph.llm import ChatProvider, LLMUnavailable, StructuredOutputError, bounds
from vault_rag.vault.listing import iter_note_paths
from vault_rag.vault.reader import DEFAULT_IGNORES, read_note

BATCH_LINES = 40
BATCH_CHARS = 2500
CONTEXT_CHARS = 40

TYPO_SYSTEM = """You proofread Markdown notes (Chinese and/or English, often about software).
Find clear typos only: misspelled words, wrong Chinese characters (错别字), doubled words.
Ignore code, identifiers, names, links, abbreviations and style. Lines are numbered "N| text".
For each typo give the line number, the misspelled text exactly as written, and the fix.
If there are none, return an empty list."""

_FENCE_RE = re.compile(r"^\s*(```|~~~)")


class Suspect(BaseModel):
    line: int = Field(description="the line number")
    suspect: str = Field(
        description="the misspelled text, exactly as written", json_schema_extra=bounds(chars=60)
    )
    suggestion: str = Field(description="the corrected text", json_schema_extra=bounds(chars=60))


class TypoList(BaseModel):
    """Likely typos in the given lines."""

    typos: list[Suspect] = Field(default_factory=list, json_schema_extra=bounds(items=20))


@dataclass
class Typo:
    note: str
    line: int
    suspect: str
    context: str
    suggestion: str


@dataclass
class TypoReport:
    typos: list[Typo] = field(default_factory=list)
    notes_checked: int = 0
    llm_calls: int = 0
    repair_retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, line) for the lines worth proofreading."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":  # frontmatter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        start = end + 1 if end is not None else 0
    kept: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(lines[start:], start + 1):
        if _FENCE_RE.match(line):
            fenced = not fenced
            continue
        if not fenced and line.strip():
            kept.append((number, line))
    return kept


def batches(lines: list[tuple[int, str]]) -> Iterable[list[tuple[int, str]]]:
    batch: list[tuple[int, str]] = []
    size = 0
    for item in lines:
        if batch and (len(batch) >= BATCH_LINES or size + len(item[1]) > BATCH_CHARS):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += len(item[1])
    if batch:
        yield batch


def context_of(line: str, suspect: str) -> str:
    at = line.find(suspect)
    start, end = max(0, at - CONTEXT_CHARS), min(len(line), at + len(suspect) + CONTEXT_CHARS)
    return ("…" if start else "") + line[start:end].strip() + ("…" if end < len(line) else "")


def verify(note: str, batch: list[tuple[int, str]], found: TypoList) -> list[Typo]:
    """Keep the findings whose suspect text really is in the note, on the line given or on the
    first line of the batch holding it; drop no-op suggestions and repeats."""
    by_number = dict(batch)
    kept: dict[tuple[int, str], Typo] = {}
    for item in found.typos:
        suspect, suggestion = item.suspect.strip(), item.suggestion.strip()
        if not suspect or not suggestion or suspect == suggestion:
            continue
        number = item.line if suspect in by_number.get(item.line, "") else None
        if number is None:
            number = next((n for n, text in batch if suspect in text), None)
        if number is None:
            continue
        line = by_number[number]
        kept.setdefault(
            (number, suspect), Typo(note, number, suspect, context_of(line, suspect), suggestion)
        )
    return list(kept.values())


async def check_note(model: ChatProvider, note: str, text: str, report: TypoReport) -> list[Typo]:
    found: list[Typo] = []
    for batch in batches(prose_lines(text)):
        numbered = "\n".join(f"{n}| {line}" for n, line in batch)
        messages = [SystemMessage(TYPO_SYSTEM), HumanMessage(f"Note: {note}\n\n{numbered}")]
        try:
            result, usage = await model.structured(TypoList, messages)
        except StructuredOutputError as exc:
            report.errors.append(f"{note}: unusable reply ({exc})")
            continue
        for key in ("llm_calls", "repair_retries", "prompt_tokens", "completion_tokens"):
            setattr(report, key, getattr(report, key) + usage[key])  # type: ignore[literal-required]
        found.extend(verify(note, batch, result))
    return found


async def check_vault(
    vault_root: Path,
    model: ChatProvider,
    *,
    ignores: Iterable[str] = DEFAULT_IGNORES,
    only: list[str] | None = None,
    on_note: Callable[[str, int], None] | None = None,
) -> TypoReport:
    """Check every note (or only the `only` paths). A model server that fails stops the run
    with what was found so far and an error entry."""
    report = TypoReport()
    wanted = set(only or [])
    for path in iter_note_paths(vault_root, ignores):
        if wanted and path not in wanted:
            continue
        source = read_note(vault_root, path)
        if source.skipped:
            continue
        try:
            typos = await check_note(model, path, source.text, report)
        except LLMUnavailable as exc:
            report.errors.append(f"stopped at {path}: {exc}")
            break
        report.notes_checked += 1
        report.typos.extend(typos)
        if on_note is not None:
            on_note(path, len(typos))
    return report


def write_report(report: TypoReport, out_dir: Path) -> list[Path]:
    """`typos.md` (a table to read) and `typos.json` (for tools) in `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "typos.json"
    json_path.write_text(json.dumps(report.to_dict(), ensure_ascii=False, indent=2), "utf-8")

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    rows = [
        "| "
        + " | ".join([cell(t.note), str(t.line), cell(t.suspect), cell(t.context)])
        + f" | {cell(t.suggestion)} |"
        for t in report.typos
    ]
    markdown = "\n".join(
        [
            "# Likely typos",
            "",
            f"{len(report.typos)} suspects in {report.notes_checked} notes "
            f"({report.llm_calls} model calls). Nothing was changed; check each one.",
            "",
            "| note | line | suspect | context | suggestion |",
            "|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    md_path = out_dir / "typos.md"
    md_path.write_text(markdown, "utf-8")
    return [md_path, json_path]
