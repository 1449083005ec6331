"""Which notes an indexing run must redo because of others: the embeds a note resolves (and
the ones it waited for in vain), as the manifest stores them."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from vault_rag.index.manifest import Manifest
from vault_rag.vault.links import NoteIndex, parse_link
from vault_rag.vault.types import ResolvedNote

MISSING_PREFIX = "missing:"


def dependents_of(manifest: Manifest, changed: Iterable[str], deleted: Iterable[str]) -> set[str]:
    """Notes whose resolved text includes a changed or deleted note, or waits for a new one."""
    changed, deleted = set(changed), set(deleted)
    found = manifest.dependents(changed | deleted)
    found |= manifest.dependents(missing_key(p) for p in changed)
    return found - changed - deleted


def missing_key(link_text: str) -> str:
    """Dependency key for an embed target that did not exist, so creating it re-indexes its
    embedders. Keyed by the note-name part, NFC and lower-cased, as links resolve."""
    name = link_text.split("|", 1)[0].split("#", 1)[0].strip().rsplit("/", 1)[-1]
    name = name[:-3] if name.lower().endswith(".md") else name
    return MISSING_PREFIX + unicodedata.normalize("NFC", name).casefold()


def note_dependencies(
    note: ResolvedNote, note_index: NoteIndex
) -> tuple[list[str], list[tuple[str, str, str | None, int | None]]]:
    """(dependency keys, warning rows) of a resolved note, as the manifest stores them."""
    deps = list(note.dependencies)
    warnings = []
    for w in note.warnings:
        warnings.append((w.code, w.message, w.target, w.line))
        if w.code == "missing_note" and w.target:
            deps.append(missing_key(w.target))
        elif w.code in ("missing_heading", "missing_block") and w.target:
            # The note exists but not the part: depend on it, so adding the heading later
            # re-resolves this note.
            found = note_index.resolve(parse_link(w.target)[0], note.path)
            if found:
                deps.append(found)
    return deps, warnings
