"""Where a question's `answer_hint` sits: the file line of the gold note that answers it.

A hint is a short phrase of the answering line (a name, a value, a few words), written in a
question file beside the question. The eval looks for it in the gold notes, in order, as the
notes are on disk (case and runs of white space ignored, within one line), and scores the line
level with the first line found: a result credits it when it cites that note and its
`line_start`–`line_end` holds the line. A hint found in no gold note is reported and its
question left out of the line level, so a typo cannot pass as a miss of the search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vault_rag.evaluation.qa import QAItem
from vault_rag.vault.paths import UnsafePathError, resolve_inside


@dataclass(frozen=True)
class HintLine:
    note_path: str
    line: int  # 1-based line of the note file


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def locate_hints(
    items: Sequence[QAItem], vault_root: Path
) -> tuple[dict[str, HintLine], list[str]]:
    """The line of each question's hint ({id: HintLine}) and the ids whose hint was not found."""
    found: dict[str, HintLine] = {}
    missing: list[str] = []
    texts: dict[str, list[str] | None] = {}
    for item in items:
        if not item.answer_hint or item.off_topic:
            continue
        hint = _fold(item.answer_hint)
        place = None
        for note in item.gold:
            if note not in texts:
                texts[note] = _lines(vault_root, note)
            lines = texts[note] or []
            number = next((n for n, line in enumerate(lines, 1) if hint in _fold(line)), None)
            if number is not None:
                place = HintLine(note, number)
                break
        if place is None:
            missing.append(item.id)
        else:
            found[item.id] = place
    return found, missing


def _lines(vault_root: Path, note: str) -> list[str] | None:
    try:
        path = resolve_inside(vault_root, note)
        return path.read_text(encoding="utf-8", errors="replace").split("\n")
    except (UnsafePathError, OSError):
        return None
