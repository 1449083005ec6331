"""Question-answer evaluation of the answer graph: run `ask` over a QA file and score the answers.

A QA file holds one JSON object per line (`tests/data/qa/README.md`): `id`, `question`, `gold`
(vault-relative note paths; `[]` for off-topic questions) and `kind`. For one model
configuration (whatever the settings say: no model = extractive) it reports

* grounded — answerable questions whose answer cites at least one vault note (or a file of a
  source beside it);
* right note — answerable questions whose answer cites a gold note (by the chunk's note, or
  the note its text was written in; a source's file as `name:path`, as gold names it);
* off-topic declined — off-topic questions answered without a single vault citation;
* model calls (p50, max, and whether any answer broke the 4 + 2 per aspect bound), prompt and
  completion tokens, time to the first answer token and to the whole answer (p50).

Every question stands alone (no thread). Answers are recorded like any other, so they can be
rated afterwards.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vault_rag.evaluation.qa import source_key
from vault_rag.graph.config import Resources
from vault_rag.graph.run import run_question


@dataclass(frozen=True)
class QAItem:
    id: str
    question: str
    gold: tuple[str, ...]
    kind: str

    @property
    def off_topic(self) -> bool:
        return self.kind == "off_topic" or not self.gold


def load_qa(path: Path) -> list[QAItem]:
    """The questions of a QA file; a malformed line is an error naming the line."""
    items: list[QAItem] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            items.append(
                QAItem(
                    id=str(raw["id"]),
                    question=str(raw["question"]),
                    gold=tuple(raw.get("gold") or ()),
                    kind=str(raw.get("kind", "")),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a QA line ({exc})") from exc
    return items


def subset(items: list[QAItem], every: int) -> list[QAItem]:
    """Every `every`-th answerable question (the first included) and all off-topic ones: a
    smaller set with the same mix of kinds, for models too slow to run the whole file."""
    answerable = [item for item in items if not item.off_topic]
    chosen = {item.id for item in answerable[::every]}
    return [item for item in items if item.off_topic or item.id in chosen]


@dataclass
class AnswerRecord:
    """One question's answer, scored."""

    id: str
    kind: str
    question: str
    gold: list[str]
    intent: str | None
    cited_notes: list[str]
    grounded: bool
    right_note: bool
    declined: bool
    llm_calls: int
    aspects: int
    prompt_tokens: int
    completion_tokens: int
    first_token_s: float | None  # time to the first streamed answer text
    total_s: float
    error: str = ""
    # What explains a miss: how strongly the question matched the notes (`classify_intent`),
    # the aspects searched, what the guards and fallbacks said, the steps that ran.
    evidence: str = ""
    evidence_dense: float = 0.0  # the question's best cosine and BM25 score
    evidence_lexical: float = 0.0
    evidence_lexical_scaled: float = 0.0  # BM25 / ln(passages), as the guards compare it
    aspect_questions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)


@dataclass
class AnswerReport:
    label: str
    records: list[AnswerRecord] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        answerable = [r for r in self.records if r.gold]
        off = [r for r in self.records if not r.gold]
        calls = [r.llm_calls for r in self.records]
        first = [r.first_token_s for r in self.records if r.first_token_s is not None]
        return {
            "label": self.label,
            "questions": len(self.records),
            "answerable": len(answerable),
            "grounded": sum(r.grounded for r in answerable),
            "right_note": sum(r.right_note for r in answerable),
            "off_topic": len(off),
            "off_topic_declined": sum(r.declined for r in off),
            "errors": sum(bool(r.error) for r in self.records),
            "llm_calls_p50": _median(calls),
            "llm_calls_max": max(calls, default=0),
            "over_budget": sum(r.llm_calls > 4 + 2 * max(1, r.aspects) for r in self.records),
            "prompt_tokens": sum(r.prompt_tokens for r in self.records),
            "completion_tokens": sum(r.completion_tokens for r in self.records),
            "first_token_s_p50": _median(first),
            "total_s_p50": _median([r.total_s for r in self.records]),
        }

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "answers": [asdict(r) for r in self.records]}


def _median(values: list[float] | list[int]) -> float:
    return round(float(statistics.median(values)), 2) if values else 0.0


def cited_notes(citations: list[dict[str, Any]]) -> list[str]:
    """The notes an answer cites: each chunk's note and the note its text came from; a file of
    a source beside the vault by its name in gold (`zlib:inflate.c`, `qa.source_key`)."""
    notes: list[str] = []
    for c in citations:
        if c.get("kind", "vault") != "vault":
            continue
        collection = c.get("collection") or "vault"
        for path in (c.get("note_path"), c.get("origin")):
            if not path or path == "promoted":
                continue
            name = path if collection == "vault" else source_key(collection, path)
            if name not in notes:
                notes.append(name)
    return notes


async def evaluate_one(item: QAItem, resources: Resources) -> AnswerRecord:
    started = time.perf_counter()
    first: float | None = None
    final: dict[str, Any] = {}
    error = ""
    evidence: dict[str, Any] = {}
    async for event in run_question(item.question, resources):
        if event.event == "delta" and first is None and event.data.get("text", "").strip():
            first = time.perf_counter() - started
        elif event.event == "progress" and event.data.get("node") == "classify_intent":
            evidence = event.data
        elif event.event == "final":
            final = event.data
        elif event.event == "error":
            error = str(event.data.get("message", "error"))
    total = time.perf_counter() - started
    notes = cited_notes(final.get("citations", []))
    return AnswerRecord(
        id=item.id,
        kind=item.kind,
        question=item.question,
        gold=list(item.gold),
        intent=final.get("intent"),
        cited_notes=notes,
        grounded=bool(notes),
        right_note=any(n in item.gold for n in notes),
        declined=not notes and not error,
        llm_calls=int(final.get("llm_calls", 0)),
        aspects=len(final.get("aspects", [])),
        prompt_tokens=int(final.get("prompt_tokens", 0)),
        completion_tokens=int(final.get("completion_tokens", 0)),
        first_token_s=round(first, 3) if first is not None else None,
        total_s=round(total, 3),
        error=error,
        evidence=str(evidence.get("evidence", "")),
        evidence_dense=float(evidence.get("dense") or 0.0),
        evidence_lexical=float(evidence.get("lexical") or 0.0),
        evidence_lexical_scaled=float(evidence.get("lexical_scaled") or 0.0),
        aspect_questions=[str(a.get("question", "")) for a in final.get("aspects", [])],
        notes=list(final.get("notes", [])),
        nodes=list(final.get("nodes", [])),
    )


async def evaluate_answers(
    items: list[QAItem], resources: Resources, label: str, on_answer: Any = None
) -> AnswerReport:
    """Ask every question in turn (one at a time: timings stay comparable)."""
    report = AnswerReport(label=label)
    for item in items:
        record = await evaluate_one(item, resources)
        report.records.append(record)
        if on_answer is not None:
            on_answer(record)
    return report


def markdown_table(summaries: list[dict[str, Any]]) -> str:
    """One row per configuration, as `docs/answers.md` shows them."""
    head = (
        "| configuration | grounded | right note | off-topic declined | model calls p50 (max) "
        "| over budget | tokens in / out | first token p50 | answer p50 |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    rows = [
        f"| {s['label']} | {s['grounded']}/{s['answerable']} | {s['right_note']}/{s['answerable']} "
        f"| {s['off_topic_declined']}/{s['off_topic']} | {s['llm_calls_p50']:g} "
        f"({s['llm_calls_max']}) | {s['over_budget']} | {s['prompt_tokens']} / "
        f"{s['completion_tokens']} | {s['first_token_s_p50']:.2f} s | {s['total_s_p50']:.2f} s |"
        for s in summaries
    ]
    return "\n".join([head, *rows])
