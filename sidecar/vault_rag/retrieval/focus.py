"""Asking about one note: retrieval that prefers the note in front of the user and its links.

`POST /v1/ask` may name a note (the one open in Obsidian, maybe with a selection). Search then
gets a `NoteFocus` (`SearchOptions.focus`), which changes two things in `hybrid_search`:

* one more candidate list for the fusion: the query's nearest passages *within* the focused
  note and its linked notes (a dense search restricted to those notes), so the note competes
  even when the whole-vault lists missed it;
* a bounded factor on the fused score: the note's own passages × (1 + w), passages of linked
  notes (it links to them, or they link to it) × (1 + w/2), with w = `focus_boost` ≤ 0.5. Like
  the feedback prior it cannot overturn a clear difference: a passage scoring below
  1 / (1 + w) of another stays below it.

The linked notes are the links the note's own text makes (parsed from its indexed chunks) plus
the ones the client sends (Obsidian knows the backlinks; the sidecar keeps no link graph).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from vault_rag.chunking.types import Chunk
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.dense import ordered
from vault_rag.retrieval.related import linked_notes
from vault_rag.settings import default
from vault_rag.vault.links import NoteIndex

MAX_FOCUS_WEIGHT = 0.5  # above this a focused note would outrank clearly better passages
MAX_LINKED = 200  # linked notes searched and boosted (a hub note links to hundreds)


@dataclass(frozen=True)
class NoteFocus:
    path: str  # the note asked about, vault-relative
    linked: frozenset[str] = frozenset()  # notes it links to and notes that link to it
    weight: float = default("focus_boost")

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight <= MAX_FOCUS_WEIGHT:
            raise ValueError(
                f"focus weight must be within [0, {MAX_FOCUS_WEIGHT}], not {self.weight}"
            )

    @property
    def notes(self) -> list[str]:
        """The focused note first, then its linked notes."""
        return [self.path, *sorted(self.linked - {self.path})]


def note_focus(
    index: VaultIndex, path: str, links: Iterable[str] = (), weight: float | None = None
) -> NoteFocus:
    """The focus on `path`: its linked notes are the links its indexed text makes plus `links`
    (from the client), kept when the index has them, at most `MAX_LINKED`."""
    manifest = index.manifest
    known = manifest.notes()
    own: set[str] = set()
    if path in known:
        own = linked_notes(manifest.note_chunks(path), path, NoteIndex(known))
    given = {p for p in links if p in known}
    linked = sorted((own | given) - {path})[:MAX_LINKED]
    if weight is None:
        return NoteFocus(path=path, linked=frozenset(linked))
    return NoteFocus(path=path, linked=frozenset(linked), weight=weight)


def focus_ranking(
    index: VaultIndex,
    query_vector: list[float],
    depth: int,
    focus: NoteFocus,
    allowed: set[str] | None,
) -> list[tuple[str, float]]:
    """The query's nearest passages among the focused note and its linked notes (cosine, best
    first): one more candidate list for the reciprocal rank fusion."""
    notes = [n for n in focus.notes if allowed is None or n in allowed]
    if not notes:
        return []
    return ordered(index.store.search(query_vector, depth, notes))


def focus_factors(chunks: Mapping[str, Chunk], focus: NoteFocus) -> dict[str, float]:
    """The factor for each candidate chunk: 1 + w for the focused note's own passages (those
    that show its text through an embed included), 1 + w/2 for linked notes', else 1."""
    factors: dict[str, float] = {}
    for chunk_id, chunk in chunks.items():
        if focus.path in (chunk.note_path, chunk.origin):
            factors[chunk_id] = 1.0 + focus.weight
        elif chunk.note_path in focus.linked:
            factors[chunk_id] = 1.0 + focus.weight / 2
        else:
            factors[chunk_id] = 1.0
    return factors
