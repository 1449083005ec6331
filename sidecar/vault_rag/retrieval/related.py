"""Related notes: the notes whose passages are closest to a given note.

Costs no model call: the note's own chunk vectors are read back from the manifest's vector cache
(by content hash) and each is used as a query against the vector store. A related note scores
its best passage's cosine similarity to any passage of the note (max over pairs), so one shared
section is enough to surface it. The note itself is left out, and so are passages of other
notes that merely show this note's text through an `![[embed]]` (their origin is the note).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vault_rag.chunking.blocks import plain_text
from vault_rag.chunking.types import Chunk
from vault_rag.index.vault_index import VaultIndex
from vault_rag.vault.links import NoteIndex, link_paths
from vault_rag.vault.paths import UnsafePathError, resolve_inside

SNIPPET_CHARS = 200

Status = Literal["ok", "pending", "not_indexed"]


class NoteNotFoundError(LookupError):
    """Neither the index nor the vault has this note."""


@dataclass(frozen=True)
class RelatedNote:
    note_path: str
    heading_path: str  # of the best-matching passage in the related note
    anchor: str
    line_start: int
    line_end: int
    snippet: str
    score: float  # cosine similarity of the closest pair of passages
    linked: bool  # the note already links to (or embeds) it


@dataclass
class RelatedResult:
    path: str
    status: Status  # ok; pending: indexed, no vector yet; not_indexed: on disk, not indexed yet
    chunks_used: int  # passages of the note used as queries
    related: list[RelatedNote] = field(default_factory=list)


def related_notes(index: VaultIndex, path: str, k: int, max_query_chunks: int) -> RelatedResult:
    """The `k` notes closest to `path` (vault-relative, already normalised), best first."""
    manifest = index.manifest
    if manifest.note(path) is None:
        if _on_disk(index, path):
            return RelatedResult(path=path, status="not_indexed", chunks_used=0)
        raise NoteNotFoundError(path)
    own = [c for c in manifest.embedded_chunks(path) if c.origin == path]
    vectors = manifest.cached_vectors(c.content_hash for c in own)
    queries = _spread([c for c in own if c.content_hash in vectors], max_query_chunks)
    if not queries:
        return RelatedResult(path=path, status="pending", chunks_used=0)

    # Enough candidates that the note's own passages (which match themselves first) and a few
    # passages per neighbour still leave k distinct notes.
    candidates = k * 4 + len(own)
    best: dict[str, float] = {}  # chunk id -> its best similarity to any query passage
    for chunk in queries:
        for chunk_id, score in index.store.search(vectors[chunk.content_hash], candidates):
            best[chunk_id] = max(score, best.get(chunk_id, score))
    hits = manifest.chunks(best)
    per_note: dict[str, tuple[float, Chunk]] = {}
    for chunk_id, score in best.items():
        hit = hits.get(chunk_id)
        if hit is None or hit.note_path == path or hit.origin == path:
            continue
        kept = per_note.get(hit.note_path)
        if kept is None or score > kept[0]:
            per_note[hit.note_path] = (score, hit)

    links = linked_notes(manifest.note_chunks(path), path, NoteIndex(manifest.notes()))
    ranked = sorted(per_note.items(), key=lambda item: (-item[1][0], item[0]))[:k]
    related = [
        RelatedNote(
            note_path=note,
            heading_path=hit.hierarchy_path,
            anchor=hit.anchor,
            line_start=hit.line_start,
            line_end=hit.line_end,
            snippet=snippet(hit.text),
            score=round(score, 4),
            linked=note in links,
        )
        for note, (score, hit) in ranked
    ]
    return RelatedResult(path=path, status="ok", chunks_used=len(queries), related=related)


def linked_notes(chunks: list[Chunk], path: str, notes: NoteIndex) -> set[str]:
    """The notes `path` links to or embeds, from its own text (fenced code left out)."""
    found: set[str] = set()
    for chunk in chunks:
        if chunk.origin != path:
            continue
        for target in link_paths(chunk.text):
            if (resolved := notes.resolve(target, path)) and resolved != path:
                found.add(resolved)
    return found


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The passage as a reader sees it (no markdown syntax), cut to `limit` characters."""
    flat = plain_text(text)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _spread(chunks: list[Chunk], limit: int) -> list[Chunk]:
    """At most `limit` chunks, evenly spaced through the note (a long note's every part counts)."""
    if len(chunks) <= limit:
        return chunks
    step = len(chunks) / limit
    return [chunks[int(i * step)] for i in range(limit)]


def _on_disk(index: VaultIndex, path: str) -> bool:
    try:
        return resolve_inside(index.vault_root, path).is_file()
    except (UnsafePathError, OSError):  # OSError: a name the file system cannot hold (too long)
        return False
