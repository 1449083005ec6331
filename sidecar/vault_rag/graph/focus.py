"""A question asked about one note (the plugin's "Ask about this note"): the turn's `focus`.

The run's input may carry `note` = `{"path", "selection", "links"}` (`POST /v1/ask` `note`).
`take_question` resolves it once per turn into `State.focus`: whether the index has the note,
its linked notes (`retrieval/focus.py`), the selection. Every vault search of the turn then
prefers the note (`search_focus`), the selection is searched as one more query per aspect, a
weak-evidence question about an indexed note is answered from it rather than declined, and the
`final` event reports what the answer took from it (`focus_info`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vault_rag.graph.config import Resources
from vault_rag.graph.state import Focus
from vault_rag.retrieval.focus import NoteFocus, note_focus

SELECTION_QUERY_CHARS = 1000  # a long selection is searched by its beginning


def resolve_focus(note: Mapping[str, Any], resources: Resources) -> Focus:
    """The turn's focus from the run's `note` input (the path already vault-relative)."""
    index = resources.index
    path = str(note.get("path") or "")
    indexed = index.manifest.note(path) is not None
    links = [str(link) for link in note.get("links") or []]
    linked = sorted(note_focus(index, path, links).linked) if indexed else []
    selection = " ".join(str(note.get("selection") or "").split())
    return Focus(path=path, linked=linked, selection=selection, indexed=indexed)


def search_focus(focus: Focus | None, resources: Resources) -> NoteFocus | None:
    """The search option for the focus; None without one, or for a note the index lacks."""
    if not focus or not focus.get("indexed"):
        return None
    return NoteFocus(
        path=focus["path"],
        linked=frozenset(focus.get("linked", [])),
        weight=resources.settings.focus_boost,
    )


def selection_query(focus: Focus | None) -> str:
    """The selection as a search query ("" when there is none)."""
    if not focus:
        return ""
    return focus.get("selection", "")[:SELECTION_QUERY_CHARS].strip()


def focus_info(focus: Focus | None, citations: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What `final.focus` says: the note, and how many citations came from it and its links."""
    if not focus:
        return None
    linked = set(focus.get("linked", []))
    paths = [c.get("note_path") for c in citations if c.get("kind") == "vault"]
    return {
        "path": focus["path"],
        "indexed": bool(focus.get("indexed")),
        "linked": len(linked),
        "selection": bool(focus.get("selection")),
        "cited": sum(p == focus["path"] for p in paths),
        "cited_linked": sum(p in linked for p in paths),
    }
