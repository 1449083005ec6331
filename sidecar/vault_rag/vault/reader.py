"""Reading note files defensively: bad bytes, binaries and giant files become warnings."""

from __future__ import annotations

import fnmatch
import functools
import re
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vault_rag.settings import DEFAULT_IGNORES as DEFAULT_IGNORES  # one list, in settings
from vault_rag.vault.paths import resolve_inside
from vault_rag.vault.types import VaultWarning

# A note larger than this is skipped with a warning: embedding it would take hours and
# such files are almost always exports or logs, not notes.
MAX_NOTE_BYTES = 5 * 1024 * 1024

NOTE_SUFFIX = ".md"


@dataclass
class NoteSource:
    """The decoded text of one note file, or the reason it was skipped."""

    path: str  # vault-relative
    text: str = ""
    skipped: bool = False
    warnings: list[VaultWarning] = field(default_factory=list)


def decode_note_bytes(path: str, data: bytes, max_bytes: int = MAX_NOTE_BYTES) -> NoteSource:
    """Turn raw file bytes into note text, never raising.

    - over `max_bytes`: skipped (`too_large`)
    - NUL bytes in the first 8 KiB: skipped (`binary`), the same heuristic git uses
    - invalid UTF-8: decoded with U+FFFD replacement characters (`invalid_utf8`), so the
      readable rest of the note is still indexed
    - empty / whitespace-only: kept, with an `empty` warning
    """
    if len(data) > max_bytes:
        return NoteSource(
            path,
            skipped=True,
            warnings=[
                VaultWarning(
                    "too_large",
                    f"{len(data)} bytes exceeds the {max_bytes}-byte limit; note skipped",
                    path,
                )
            ],
        )
    if b"\x00" in data[:8192]:
        return NoteSource(
            path,
            skipped=True,
            warnings=[VaultWarning("binary", "file contains NUL bytes; not a text note", path)],
        )
    warnings: list[VaultWarning] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warnings.append(
            VaultWarning(
                "invalid_utf8",
                f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced with U+FFFD",
                path,
            )
        )
    # Normalise line endings once so every later stage can count lines with "\n".
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        warnings.append(VaultWarning("empty", "note is empty", path))
    return NoteSource(path, text=text, warnings=warnings)


def read_note(vault_root: Path, rel_path: str, max_bytes: int = MAX_NOTE_BYTES) -> NoteSource:
    """Read one note by vault-relative path. Unsafe paths raise UnsafePathError; I/O problems
    become an `unreadable` warning."""
    absolute = resolve_inside(vault_root, rel_path)
    try:
        info = absolute.stat()
        if not stat.S_ISREG(info.st_mode):
            # A directory, FIFO or device named *.md: reading a FIFO would block forever.
            return NoteSource(
                rel_path,
                skipped=True,
                warnings=[VaultWarning("unreadable", "not a regular file", rel_path)],
            )
        size = info.st_size
        if size > max_bytes:
            return NoteSource(
                rel_path,
                skipped=True,
                warnings=[
                    VaultWarning(
                        "too_large",
                        f"{size} bytes exceeds the {max_bytes}-byte limit; note skipped",
                        rel_path,
                    )
                ],
            )
        data = absolute.read_bytes()
    except OSError as exc:
        return NoteSource(
            rel_path,
            skipped=True,
            warnings=[VaultWarning("unreadable", f"cannot read note: {exc}", rel_path)],
        )
    return decode_note_bytes(rel_path, data, max_bytes)


# An ignore pattern starting with "/" is rooted at the vault (the sidecar's `exclude` setting,
# the plugin's "Excluded folders"): it matches a vault-relative path and everything under it.
ROOTED = "/"


def is_ignored(rel_path: str, ignores: Iterable[str] = DEFAULT_IGNORES) -> bool:
    """True when any folder part of `rel_path` is ignored, or the path matches an ignore glob;
    a rooted pattern ("/Journal/private", "/*/drafts") covers the path when it names the path
    or a folder above it (`rooted_pattern`: literal but for `*`), compared in NFC (how the
    plugin and `normalize_rel_path` spell paths)."""
    parts = rel_path.split("/")
    for pattern in ignores:
        if pattern.startswith(ROOTED):
            if _rooted_match(rel_path, pattern[1:]):
                return True
            continue
        if any(fnmatch.fnmatchcase(part, pattern) for part in parts[:-1]):
            return True
        if fnmatch.fnmatchcase(rel_path, pattern):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def rooted_pattern(pattern: str) -> re.Pattern[str]:
    """An excluded-folder entry as a regex over whole NFC vault-relative paths. Every character
    means itself (`[Secret]`, `#`, `?` and `!` are parts of real folder names) except `*`, the
    one wildcard, which matches any run of characters, across folders. The plugin's
    `isExcluded` gives entries the same meaning (shared-schemas/fixtures/exclude.json)."""
    text = unicodedata.normalize("NFC", pattern)
    return re.compile(".*".join(re.escape(piece) for piece in text.split("*")), re.DOTALL)


def _rooted_match(rel_path: str, pattern: str) -> bool:
    if not pattern:
        return False
    regex = rooted_pattern(pattern)
    parts = unicodedata.normalize("NFC", rel_path).split("/")
    return any(regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1))


def is_note_path(
    path: str,
    ignores: Iterable[str] = DEFAULT_IGNORES,
    suffixes: tuple[str, ...] = (NOTE_SUFFIX,),
) -> bool:
    """A path the vault scan indexes: `.md` (or another of `suffixes`, the source kinds the
    indexer reads), in no hidden folder, not ignored (as `iter_note_paths` judges it; used for
    single paths from the watcher and posted notes)."""
    folders = path.split("/")[:-1]
    return (
        path.lower().endswith(suffixes)
        and not any(part.startswith(".") for part in folders)
        and not is_ignored(path, tuple(ignores))
    )


def is_watched_folder(path: str, ignores: Iterable[str] = DEFAULT_IGNORES) -> bool:
    """A folder the vault scan walks into (judged as `listing.iter_note_paths` judges it)."""
    return not any(p.startswith(".") for p in path.split("/")) and not is_ignored(
        path + "/x", tuple(ignores)
    )
