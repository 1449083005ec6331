"""The per-note material that locating a citation needs, kept between searches.

Locating the cited span (`retrieval/cite.py`) looks at every unit of each result note: its
sections (the unit cut at its inner headings), their text folded for matching, and the unit's
vector. Reading and parsing a note's units from the manifest for every result note of every
search cost ~40 ms a search on the sample vault, and cutting them ~10 ms more; the vectors
another query each. All of it depends only on the note's indexed units, so it is built once per
note and kept until the manifest says the note changed (the same change token and journal of
touched notes `index/dense/note_vectors.py` follows); a write that does not name its notes, or one
from another process, drops the whole cache. Bounded: the least recently used notes go first.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from vault_rag.chunking.spans import Span, chunk_spans
from vault_rag.chunking.types import Chunk
from vault_rag.index.manifest import Manifest

if TYPE_CHECKING:
    from vault_rag.index.vault_index import VaultIndex

MAX_NOTES = 2048  # notes kept; a note's entry is its units' parsed form and vectors


@dataclass(frozen=True)
class NoteUnit:
    """One unit of a note, ready for locating: its chunk, its sections and their folded text."""

    chunk: Chunk
    spans: tuple[Span, ...]
    folded: tuple[str, ...]  # each span's text, casefolded
    titles: tuple[str, ...]  # each span's own heading, casefolded ("" when none)


@dataclass(frozen=True)
class NoteEntry:
    units: dict[str, NoteUnit]  # chunk id → unit, in note order
    vectors: dict[str, np.ndarray]  # chunk id → normalised vector (embedded units only)
    # chunk id → its spans' normalised vectors, one row each (units of several spans whose
    # sections were embedded at index time, `index/section_vectors.py`)
    span_vectors: dict[str, np.ndarray] = field(default_factory=dict)


class NoteUnitsCache:
    """`entry(note)`: the note's units, cut and folded, with their vectors; kept in step with
    the manifest."""

    def __init__(self, manifest: Manifest, size: int = MAX_NOTES) -> None:
        self.manifest = manifest
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, NoteEntry] = OrderedDict()
        self._token: tuple[int, int] | None = None

    def entry(self, note_path: str) -> NoteEntry:
        with self._lock:
            self._sync()
            found = self._entries.get(note_path)
            if found is not None:
                self._entries.move_to_end(note_path)
                return found
        built = _build(self.manifest, note_path)
        with self._lock:
            self._entries[note_path] = built
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return built

    def _sync(self) -> None:
        """Forget the notes the manifest changed since the last look (all, when not said)."""
        token = self.manifest.change_token()
        if token == self._token:
            return
        touched = None
        if self._token is not None and token[1] == self._token[1]:  # only this process wrote
            touched = self.manifest.notes_touched(self._token[0])
        if touched is None:
            self._entries.clear()
        else:
            for note in touched:
                self._entries.pop(note, None)
        self._token = token


# One cache per open index, living as long as it (the index package does not know retrieval)
_CACHES: weakref.WeakKeyDictionary[VaultIndex, NoteUnitsCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_for(index: VaultIndex) -> NoteUnitsCache:
    """The citation cache of this open index (made on first use)."""
    with _CACHES_LOCK:
        found = _CACHES.get(index)
        if found is None or found.manifest is not index.manifest:
            found = _CACHES[index] = NoteUnitsCache(index.manifest)
        return found


def _build(manifest: Manifest, note_path: str) -> NoteEntry:
    chunks = manifest.note_chunks(note_path)
    paths = note_heading_paths(chunks, note_path)
    units: dict[str, NoteUnit] = {}
    for chunk in chunks:
        spans = tuple(chunk_spans(chunk, paths))
        units[chunk.id] = NoteUnit(
            chunk,
            spans,
            tuple(s.text.casefold() for s in spans),
            tuple(s.title.casefold() for s in spans),
        )
    vectors: dict[str, np.ndarray] = {}
    for chunk_id, vector in manifest.unit_vectors(list(units)).items():
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            vectors[chunk_id] = vector / norm
    several = {i: u for i, u in units.items() if len(u.spans) > 1}
    sections = manifest.section_vectors([u.chunk.content_hash for u in several.values()])
    span_vectors = {
        i: matrix
        for i, u in several.items()
        if (matrix := sections.get(u.chunk.content_hash)) is not None
        and len(matrix) == len(u.spans)  # (the same cut as at index time, else unused)
    }
    return NoteEntry(units, vectors, span_vectors)


def note_heading_paths(units: Sequence[Chunk], note_path: str) -> dict[str, str]:
    """Heading text → heading path of the note's units (the chunker's own paths)."""
    out: dict[str, str] = {}
    for chunk in units:
        if chunk.anchor and chunk.origin == note_path:
            out.setdefault(chunk.anchor, chunk.hierarchy_path)
    return out
