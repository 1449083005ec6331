"""The chunk: the unit that is embedded, indexed, retrieved and cited."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

HIERARCHY_SEPARATOR = " > "


@dataclass(frozen=True)
class Chunk:
    id: str  # stable: derived from note path + position in the note's heading structure
    note_path: str  # vault-relative path of the note being chunked
    text: str  # the chunk body exactly as in the resolved note (no header)
    embed_text: str  # context header (title + heading path) + "\n\n" + text: what gets embedded
    content_hash: str  # sha256 hex of embed_text; equal hash ⇒ the stored vector can be reused
    hierarchy_path: str  # e.g. "Rendering > Materials > Parameters"; "" before the first heading
    anchor: str  # heading text for a deep link `[[note#anchor]]`; "" before the first heading
    line_start: int  # 1-based file line in the note (embedded text maps to its embed line)
    line_end: int  # inclusive
    has_code: bool
    size: int  # size units: one CJK character or one Latin word counts one
    title: str
    origin: str  # note the text was written in (== note_path unless it came from an embed)
    origins: tuple[str, ...] = ()  # every note contributing text to this chunk, sorted
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["origins"] = list(self.origins)
        data["tags"] = list(self.tags)
        data["aliases"] = list(self.aliases)
        return data
