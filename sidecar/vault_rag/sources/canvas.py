"""Canvases (JSON Canvas 1.0, `.canvas`): text cards become units, file cards and edges links.

- Each text card is a unit labelled by the groups that hold it (a group holds a card whose box
  lies inside the group's box; nested groups give a path, outermost first), then the card's
  first line. `line_start`/`line_end` are 1: a card has no line in the file.
- A text card joined by an edge to a file card (a note, a PDF) says so in its text
  (`→ [[Notes/Target.md]]`): the link signal, the related view and the focus read links from
  unit text, so they follow the canvas's arrows. File cards no text card is joined to are
  listed in one unit per group (`[[a.md]]` lines), so the board's notes are linked too.
- Cited as `[[board.canvas]]` (Obsidian opens the board; cards have no deep link).
- A file that is not a JSON Canvas (bad JSON, no `nodes` list) is a `bad_canvas` warning and
  no units; a malformed card or edge is left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.chunking.pipeline import NoteChunks
from vault_rag.chunking.types import Chunk
from vault_rag.sources.base import make_unit
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import resolve_inside
from vault_rag.vault.types import ResolvedNote, VaultWarning

KIND = "canvas"
MAX_CANVAS_BYTES = 20 * 1024 * 1024  # a board larger than this is not read (`too_large`)
_LABEL_CHARS = 80


@dataclass(frozen=True)
class _Box:
    id: str
    type: str
    x: float
    y: float
    width: float
    height: float
    text: str  # text card: its markdown; group: its label; file card: the vault path

    def inside(self, other: _Box) -> bool:
        return (
            other.x <= self.x
            and other.y <= self.y
            and self.x + self.width <= other.x + other.width
            and self.y + self.height <= other.y + other.height
        )


class CanvasKind:
    name = KIND
    suffixes = (".canvas",)

    def units(
        self, vault_root: Path, rel: str, notes: NoteIndex, options: ChunkOptions
    ) -> NoteChunks:
        note = ResolvedNote(path=rel, text="")
        try:
            path = resolve_inside(vault_root, rel)
            if path.stat().st_size > MAX_CANVAS_BYTES:
                raise _Bad("too_large", f"canvas over {MAX_CANVAS_BYTES >> 20} MB; not read")
            data = json.loads(path.read_bytes().decode("utf-8-sig", "replace"))
            boxes, edges = _parse(data)
        except _Bad as bad:
            note.warnings.append(VaultWarning(bad.code, str(bad), rel))
            return NoteChunks(note=note)
        except OSError as exc:
            note.warnings.append(VaultWarning("unreadable", f"cannot read: {exc}", rel))
            return NoteChunks(note=note)
        except (ValueError, RecursionError) as exc:
            message = f"not a JSON Canvas file ({exc.__class__.__name__}: {exc})"
            note.warnings.append(VaultWarning("bad_canvas", message[:300], rel))
            return NoteChunks(note=note)
        chunks = canvas_units(rel, boxes, edges)
        note.text = "\n\n".join(c.text for c in chunks)
        return NoteChunks(note=note, chunks=chunks)


class _Bad(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _parse(data: Any) -> tuple[list[_Box], list[tuple[str, str]]]:
    if not isinstance(data, dict) or not isinstance(data.get("nodes", []), list):
        raise _Bad("bad_canvas", "not a JSON Canvas file (no `nodes` list)")
    boxes: list[_Box] = []
    for node in data.get("nodes", []):
        box = _box(node)
        if box is not None:
            boxes.append(box)
    edges: list[tuple[str, str]] = []
    raw_edges = data.get("edges", [])
    for edge in raw_edges if isinstance(raw_edges, list) else []:
        if isinstance(edge, dict):
            a, b = edge.get("fromNode"), edge.get("toNode")
            if isinstance(a, str) and isinstance(b, str):
                edges.append((a, b))
    return boxes, edges


def _box(node: Any) -> _Box | None:
    if not isinstance(node, dict) or not isinstance(node.get("id"), str):
        return None
    kind = node.get("type")
    field = {"text": "text", "group": "label", "file": "file"}.get(
        kind if isinstance(kind, str) else ""
    )
    if field is None:
        return None  # `link` cards (web pages) and unknown types
    value = node.get(field, "")
    try:
        x, y = float(node.get("x", 0)), float(node.get("y", 0))
        w, h = float(node.get("width", 0)), float(node.get("height", 0))
    except (TypeError, ValueError):
        return None
    return _Box(node["id"], str(kind), x, y, w, h, value if isinstance(value, str) else "")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= _LABEL_CHARS else line[: _LABEL_CHARS - 1] + "…"
    return ""


def canvas_units(rel: str, boxes: list[_Box], edges: list[tuple[str, str]]) -> list[Chunk]:
    """The units of one board (see the module doc), in reading order (top to bottom)."""
    groups = [b for b in boxes if b.type == "group"]
    by_id = {b.id: b for b in boxes}

    def group_path(box: _Box) -> tuple[str, ...]:
        holders = [g for g in groups if g is not box and box.inside(g)]
        holders.sort(key=lambda g: g.width * g.height, reverse=True)  # outermost first
        return tuple(_first_line(g.text) or "Group" for g in holders)

    joined: dict[str, list[str]] = {}
    linked_files: set[str] = set()
    for a, b in edges:
        for card, other in ((a, b), (b, a)):
            pair = (by_id.get(card), by_id.get(other))
            if pair[0] and pair[1] and (pair[0].type, pair[1].type) == ("text", "file"):
                joined.setdefault(card, []).append(pair[1].text)
                linked_files.add(other)
    title = rel.rsplit("/", 1)[-1]
    title = title[: -len(".canvas")] if title.lower().endswith(".canvas") else title
    units: list[Chunk] = []
    ordinals: dict[tuple[str, ...], int] = {}

    def add(text: str, heading: tuple[str, ...], card: str) -> None:
        ordinal = ordinals.get(heading, 0)
        ordinals[heading] = ordinal + 1
        units.append(
            make_unit(
                path=rel,
                kind=KIND,
                title=title,
                text=text,
                heading=heading,
                anchor="",
                ordinal=ordinal,
                line_start=1,
                line_end=1,
                extra={"card": card},
            )
        )

    ordered = sorted(boxes, key=lambda b: (b.y, b.x, b.id))
    for box in ordered:
        if box.type != "text" or not box.text.strip():
            continue
        links = "".join(f"\n→ [[{target}]]" for target in joined.get(box.id, []) if target)
        add(box.text.strip() + links, (*group_path(box), _first_line(box.text)), box.id)
    loose: dict[tuple[str, ...], list[str]] = {}
    for box in ordered:
        if box.type == "file" and box.text and box.id not in linked_files:
            loose.setdefault(group_path(box), []).append(f"[[{box.text}]]")
    for path, lines in loose.items():
        add("\n".join(lines), (*path, "Files"), "files")
    return units
