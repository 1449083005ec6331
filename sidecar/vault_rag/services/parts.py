"""`VaultParts`: what every service needs, and the path check every note-taking call shares."""

from __future__ import annotations

from typing import Any, Protocol

from vault_rag.index.vault_index import VaultIndex
from vault_rag.services.errors import ServiceError
from vault_rag.settings import Settings
from vault_rag.vault.exclusions import Exclusions
from vault_rag.vault.paths import UnsafePathError, normalize_rel_path


class VaultParts(Protocol):
    """The long-lived objects one process serves the vault with (`api.deps.ServerState` has
    them; so does `mcp_server.local.LocalVault`)."""

    settings: Settings
    index: VaultIndex
    exclusions: Exclusions  # excluded folders: never read, searched around or served
    prior: Any  # feedback.prior.FeedbackPrior, or None when off


def note_path(raw: str) -> str:
    """The canonical vault-relative form of a note path; `unsafe_path` (400) when it is
    absolute, has `..` or is empty."""
    try:
        return normalize_rel_path(raw)
    except UnsafePathError as exc:
        raise ServiceError(400, "unsafe_path", str(exc), {"path": raw}) from exc


def served_path(raw: str, parts: VaultParts) -> str:
    """`note_path`, and `excluded` (403) for a path an excluded folder covers: such a note is
    never read, searched around or stored, and the same answer comes whether it exists or not."""
    path = note_path(raw)
    if parts.exclusions.covers(path):
        raise ServiceError(403, "excluded", "the note is in an excluded folder", {"path": path})
    return path


def visible(parts: VaultParts, *paths: str) -> bool:
    """No excluded folder covers any of `paths` (a hit, its origin, the notes embedding it)."""
    return not any(parts.exclusions.covers(p) for p in paths if p)
