"""Vault-relative paths: one normal form, and refusal of anything that escapes the vault."""

from __future__ import annotations

import unicodedata
from pathlib import Path, PurePosixPath


class UnsafePathError(ValueError):
    """A path that is absolute, contains `..`, or otherwise points outside the vault."""


def normalize_rel_path(raw: str) -> str:
    """Return the canonical vault-relative form of `raw`: NFC, forward slashes, no `.` parts.

    Raises UnsafePathError for absolute paths, drive letters, `..` parts, NUL bytes or empty paths.
    """
    if not raw or "\x00" in raw:
        raise UnsafePathError(f"empty or NUL-containing path: {raw!r}")
    text = unicodedata.normalize("NFC", raw.replace("\\", "/"))
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise UnsafePathError(f"absolute path not allowed: {raw!r}")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if not parts:
        raise UnsafePathError(f"empty path: {raw!r}")
    if any(p == ".." for p in parts):
        raise UnsafePathError(f"path escapes the vault: {raw!r}")
    return "/".join(parts)


def resolve_inside(vault_root: Path, rel_path: str) -> Path:
    """Absolute path of `rel_path` under `vault_root`, refusing anything that lands outside it
    (including through symlinks)."""
    rel = normalize_rel_path(rel_path)
    root = vault_root.resolve()
    candidate = (root / rel).resolve()
    if candidate != root and root not in candidate.parents:
        raise UnsafePathError(f"path escapes the vault: {rel_path!r}")
    return candidate


def to_rel_path(vault_root: Path, absolute: Path) -> str:
    """Vault-relative canonical form of a path found while walking the vault."""
    rel = absolute.relative_to(vault_root).as_posix()
    return normalize_rel_path(rel)
