"""Link signal: a passage that matches the question vouches for the notes it links to.

Vaults are full of overview passages — a glossary entry, a "map of content" section, a parent
note's paragraph on a sub-topic — that match a question well and link to the note that answers
it in full (`Glossary > Pop-out window` → `[[Pop-out windows]]`, `场景空间管理 > 二元空间分割树`
→ `[[二元空间分割树]]`). Like anchor text in web search, the link is evidence for its target.
Each of the `LINK_TOP` best fused candidates passes `link_weight` × its fused score, split
evenly over the distinct notes it links to, to those notes; a note takes the largest share
offered, on its best candidate. It re-orders candidates, never adds one (a linked note that
neither list found gains nothing), and splitting keeps a passage that is a list of links from
lifting all of them. Measured in docs/retrieval.md ("Links").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from vault_rag.chunking.types import Chunk
from vault_rag.vault.links import NoteIndex, link_paths

LINK_TOP = 10  # fused candidates whose links count


def add_link_signal(
    fused: dict[str, float], chunks: Mapping[str, Chunk], notes: NoteIndex, weight: float
) -> None:
    """Raise, in place, each linked note's best candidate by the share its linkers offer."""
    if weight <= 0 or not fused:
        return
    ranked = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id))
    offered: dict[str, float] = defaultdict(float)
    for chunk_id in ranked[:LINK_TOP]:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        targets = linked_targets(chunk, notes)
        for note in targets:
            offered[note] = max(offered[note], weight * fused[chunk_id] / len(targets))
    if not offered:
        return
    best: dict[str, str] = {}  # note → its best candidate (by the fused score before bonuses)
    for chunk_id in ranked:
        chunk = chunks.get(chunk_id)
        if chunk is not None and chunk.note_path in offered:
            best.setdefault(chunk.note_path, chunk_id)
    for note, chunk_id in best.items():
        fused[chunk_id] += offered[note]


def linked_targets(chunk: Chunk, notes: NoteIndex) -> set[str]:
    """The notes a passage links to, resolved from the note that wrote it; never its own note
    or the note its text came from."""
    own = {chunk.note_path, chunk.origin}
    found: set[str] = set()
    for path in link_paths(chunk.text):
        resolved = notes.resolve(path, chunk.origin or chunk.note_path)
        if resolved is not None and resolved not in own:
            found.add(resolved)
    return found
