"""Vault-relative paths: one normal form, and refusal of anything that escapes the vault."""

from __future__ import annotations

import os
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
    if text.startswith("/"):
        raise UnsafePathError(f"absolute path not allowed: {raw!r}")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if not parts:
        raise UnsafePathError(f"empty path: {raw!r}")
    # Drive letters are checked after dropping `.` parts: "./C:/x" must not become "C:/x".
    if len(parts[0]) > 1 and parts[0][1] == ":":
        raise UnsafePathError(f"absolute path not allowed: {raw!r}")
    if any(p == ".." for p in parts):
        raise UnsafePathError(f"path escapes the vault: {raw!r}")
    return "/".join(parts)


def resolve_inside(vault_root: Path, rel_path: str) -> Path:
    """Absolute path of `rel_path` under `vault_root`, refusing anything that lands outside it
    (including through symlinks)."""
    rel = normalize_rel_path(rel_path)
    root = vault_root.resolve()
    candidate = _on_disk(root, rel).resolve()
    if candidate != root and root not in candidate.parents:
        raise UnsafePathError(f"path escapes the vault: {rel_path!r}")
    return candidate


def _on_disk(root: Path, rel: str) -> Path:
    """`root / rel`, or when that does not exist, the same path spelled in the normal form the
    file system actually holds: a vault synced from macOS can keep NFD names on Linux, while
    `rel` is always NFC."""
    direct = root / rel
    if os.path.lexists(direct):
        return direct
    current = root
    for part in rel.split("/"):
        step = current / part
        if not os.path.lexists(step):
            try:
                names = os.listdir(current)
            except OSError:
                return direct
            match = next((n for n in names if unicodedata.normalize("NFC", n) == part), None)
            if match is None:
                return direct
            step = current / match
        current = step
    return current


def to_rel_path(vault_root: Path, absolute: Path) -> str:
    """Vault-relative canonical form of a path found while walking the vault."""
    rel = absolute.relative_to(vault_root).as_posix()
    return normalize_rel_path(rel)
