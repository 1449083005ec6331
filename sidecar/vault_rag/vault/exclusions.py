"""Excluded folders: vault paths the sidecar never reads, indexes or serves.

Two lists apply together (a path is excluded when either covers it):
- the `exclude` setting (settings file or `VAULT_RAG_EXCLUDE`), fixed while a process runs;
- the list the plugin pushes from its "Excluded folders" setting (`PUT /v1/settings/exclude`),
  kept in the data dir as `exclude.json`, so a restart, `vault-rag index` and the start-up
  scan honour it before the plugin connects again.

An entry is a vault-relative folder or note path (`Journal/private`, `[Secret]`); it excludes
the path and everything under it. Every character means itself except `*`, which matches any
run of characters, across folders (`*/drafts`, `Daily/2019-*`): the plugin's `isExcluded` gives
entries the same meaning, and both test suites run `shared-schemas/fixtures/exclude.json`.
Entries become rooted `ignore` patterns (`vault.reader.is_ignored`), so the scan, the watcher,
the note routes and the link index all apply them through the one ignore list they already
share.
"""

from __future__ import annotations

import json
import os
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from vault_rag.storage.private_files import FILE_MODE
from vault_rag.vault.reader import ROOTED, is_ignored

if TYPE_CHECKING:
    from concurrent.futures import Future

    from vault_rag.settings import Settings


# What a push applies the new list to, named by what it needs rather than imported: the
# watcher and the index's disk sync sit above this module (`watch/`) and use it.
class IgnoreFilter(Protocol):
    ignores: tuple[str, ...]


class IgnoreApplier(Protocol):
    def set_ignores(self, ignores: tuple[str, ...]) -> Future[tuple[list[str], list[str]]]: ...


EXCLUDE_FILE = "exclude.json"
MAX_PATTERNS = 1000


class ExcludeError(ValueError):
    """An entry that is not a vault-relative path or glob, or an unreadable `exclude.json`."""


def normalize_pattern(raw: str) -> str:
    """The canonical form of one entry: NFC, forward slashes, no leading/trailing slash or
    `.` parts. Raises `ExcludeError` for an empty entry, `..`, a drive letter or NUL."""
    text = unicodedata.normalize("NFC", raw.strip().replace("\\", "/"))
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or "\x00" in text:
        raise ExcludeError(f"not a vault folder or glob: {raw!r}")
    if ".." in parts or (len(parts[0]) > 1 and parts[0][1] == ":"):
        raise ExcludeError(f"outside the vault: {raw!r}")
    return "/".join(parts)


def normalize_patterns(raw: Iterable[str]) -> list[str]:
    """Normalised entries, duplicates dropped, order kept."""
    patterns = list(dict.fromkeys(normalize_pattern(p) for p in raw))
    if len(patterns) > MAX_PATTERNS:
        raise ExcludeError(f"at most {MAX_PATTERNS} excluded folders, got {len(patterns)}")
    return patterns


def ignore_patterns(ignore: Iterable[str], exclude: Iterable[str]) -> tuple[str, ...]:
    """The one ignore list: the `ignore` setting's patterns plus each exclusion, rooted."""
    return (*ignore, *(ROOTED + p for p in exclude))


def is_excluded(rel_path: str, ignores: Iterable[str]) -> bool:
    """True when a rooted pattern of `ignores` (an exclusion, not the `ignore` setting's
    folder names) covers the path."""
    return is_ignored(rel_path, tuple(p for p in ignores if p.startswith(ROOTED)))


def exclude_path(data_dir: Path) -> Path:
    return data_dir / EXCLUDE_FILE


def load_pushed(data_dir: Path) -> list[str]:
    """The plugin's list as last pushed; [] when it never pushed one. A damaged file is an
    error, not an empty list: guessing "nothing excluded" would index private notes."""
    path = exclude_path(data_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ExcludeError(
            f"{path} is unreadable ({exc}); delete it and set the excluded folders again"
        ) from exc
    patterns = data.get("exclude") if isinstance(data, dict) else None
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ExcludeError(f"{path} has no `exclude` list; delete it and set it again")
    return normalize_patterns(patterns)


def save_pushed(data_dir: Path, patterns: list[str]) -> None:
    """Write the list atomically (a crash leaves the old or the new file, never half)."""
    path = exclude_path(data_dir)
    temp = path.with_suffix(".json.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"exclude": patterns}, handle, ensure_ascii=False, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


@dataclass
class Exclusions:
    """The exclusions in force for one data dir: configured ones and the plugin's."""

    data_dir: Path
    ignore: tuple[str, ...]  # the `ignore` setting (folder names and globs, not rooted)
    configured: list[str]  # the `exclude` setting
    pushed: list[str]  # the plugin's, from `exclude.json`
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, settings: Settings, data_dir: Path) -> Exclusions:
        return cls(
            data_dir,
            tuple(settings.ignore),
            normalize_patterns(settings.exclude),
            load_pushed(data_dir),
        )

    def patterns(self) -> list[str]:
        return list(dict.fromkeys([*self.configured, *self.pushed]))

    def ignores(self) -> tuple[str, ...]:
        return ignore_patterns(self.ignore, self.patterns())

    def covers(self, rel_path: str) -> bool:
        """True when an exclusion covers the path: nothing about it may be read or served.
        Judged on the path alone, so the answer never tells whether such a file exists."""
        return is_excluded(rel_path, self.ignores())

    def push(
        self, patterns: list[str], sync: IgnoreApplier, watcher: IgnoreFilter | None
    ) -> Future[tuple[list[str], list[str]]]:
        """Replace the plugin's list: written to the data dir first (a crash right after still
        honours it at the next start), then applied to the watcher and, on the index writer,
        to the index (see `DiskSync.set_ignores`). Returns its (removed, queued) future."""
        with self._lock:
            save_pushed(self.data_dir, patterns)
            self.pushed = list(patterns)
            ignores = self.ignores()
            if watcher is not None:
                watcher.ignores = ignores
            return sync.set_ignores(ignores)
