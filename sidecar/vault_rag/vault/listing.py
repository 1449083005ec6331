"""The vault's note paths, listed again only where a folder changed.

Link resolution and the "has a file" check of a posted note need every note path of the vault,
and a full walk of 10,000 notes costs ~0.4 s of CPU: the server paid it on every posted note
and every watcher batch. A `VaultListing` remembers each folder's entries with the folder's
mtime. A folder's mtime changes whenever an entry is added, removed or renamed in it, so a
later call stats the known folders and lists again only those that moved, or that were listed
so soon after a change that a second change could share the timestamp (git's "racy" rule).
File contents do not matter here: they are the manifest's business.

The rules are the full walk's (`iter_note_paths` is a one-off listing): `.md` files
(and the other kinds' suffixes the indexer asks for: `.pdf`, `.canvas`),
NFC vault-relative paths, sorted; hidden folders, ignored folders and files, and symlinks
(files, and folders, which are never walked into) left out; unreadable folders skipped.

Two kinds of `.md` entry are skipped and reported in `skipped`, never raised: one such file
must not stop the indexing of every other note. A FIFO, socket or device named `.md`
(`not_regular`) would block or never end a read. A name that has no safe vault-relative form
(`unsafe_name`): a
backslash (`a\\b.md`, `..\\x.md`) is a folder separator to Obsidian, Windows and the path rules
of `vault.paths`; a top-level name whose second character is a colon (`Q: quokkas.md`) reads as
a Windows drive; a name that is not valid UTF-8 cannot be stored or sent as text. Each is
legal on Linux (the first two on macOS too) and can reach the vault from outside Obsidian.
"""

from __future__ import annotations

import fnmatch
import os
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vault_rag.vault.paths import normalize_rel_path
from vault_rag.vault.reader import (
    DEFAULT_IGNORES,
    NOTE_SUFFIX,
    ROOTED,
    is_ignored,
    rooted_pattern,
)

# A folder whose mtime is younger than this when it is listed is listed again next time:
# coarse file-system clocks (1-2 s on FAT/exFAT, HFS+) could hide a second change.
RACY_NS = 2_000_000_000


UNSAFE_NAME = "unsafe_name"
NOT_REGULAR = "not_regular"
IGNORED = "ignored"  # left out by a source's own rules (its .gitignore files, build folders)
NOT_REGULAR_WHY = "not a regular file (a FIFO, socket or device): reading it could block"


@dataclass(frozen=True)
class Skip:
    """Why an entry of the vault was left out: a warning code and a sentence."""

    code: str
    why: str


@dataclass(frozen=True)
class _Folder:
    mtime_ns: int
    trusted: bool
    notes: tuple[str, ...]  # NFC vault-relative paths of the notes directly in it
    subfolders: tuple[str, ...]  # on-disk relative paths of the folders walked into
    skipped: tuple[tuple[str, Skip], ...] = ()  # (printable path, why) of entries left out


class VaultListing:
    """Note paths of one vault with one ignore list; not thread-safe (one owner thread)."""

    def __init__(
        self,
        root: Path,
        ignores: Iterable[str] = DEFAULT_IGNORES,
        suffixes: tuple[str, ...] = (NOTE_SUFFIX,),
        skip: Callable[[str, bool], str | None] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.ignores = tuple(ignores)
        # A source's own rules (`source_indexes/specs.py`: .gitignore files, include/exclude globs):
        # skip(path, is_folder) → why the file is left out, or the folder unwalked (an
        # `ignored` entry of `skipped`); None keeps it.
        self.skip = skip
        # The file kinds listed (lower case, with the dot): `.md`, and the other source kinds
        # the indexer reads (`sources/registry.py`).
        self.suffixes = suffixes
        self._folders: dict[str, _Folder] = {}
        self._nfc: dict[str, str] = {"": ""}  # on-disk folder → its canonical (NFC) path
        self._paths: list[str] = []
        self.version = 0  # bumped whenever the listed paths change
        # `.md` entries left out for their name or kind: printable path → why. As of the last
        # `paths()` call.
        self.skipped: dict[str, Skip] = {}

    def paths(self) -> list[str]:
        """Every note path now, sorted (a new list each call)."""
        folders: dict[str, _Folder] = {}
        changed = False
        pending = [""]
        while pending:
            rel = pending.pop()
            folder = self._folder(rel)
            if folder is None:
                continue
            before = self._folders.get(rel)
            changed = changed or before is None or before.notes != folder.notes
            folders[rel] = folder
            pending.extend(folder.subfolders)
        changed = changed or folders.keys() != self._folders.keys()
        self._folders = folders
        self.skipped = dict(sorted(item for f in folders.values() for item in f.skipped))
        if changed or not self.version:
            self._paths = sorted(p for f in folders.values() for p in f.notes)
            self.version += 1
        return list(self._paths)

    def _folder(self, rel: str) -> _Folder | None:
        absolute = os.path.join(self.root, rel) if rel else str(self.root)
        try:
            mtime = os.stat(absolute).st_mtime_ns  # before listing: a change meanwhile shows
        except OSError:
            return None
        cached = self._folders.get(rel)
        if cached is not None and cached.trusted and cached.mtime_ns == mtime:
            return cached
        try:
            with os.scandir(absolute) as scan:
                entries = list(scan)
        except OSError:  # unreadable: skipped, as the full walk skips it
            return None
        if rel not in self._nfc:  # (its parent was listed first: the walk goes top-down)
            parent, _, name = rel.rpartition("/")
            self._nfc[rel] = self._canonical(parent, name)
        notes: list[str] = []
        subfolders: list[str] = []
        skipped: list[tuple[str, Skip]] = []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks, as os.walk sorts entries
                is_link = entry.is_symlink()
            except OSError:
                continue
            on_disk = f"{rel}/{name}" if rel else name
            if is_dir:
                if name.startswith(".") or is_link:
                    continue
                why = unsafe_name(rel, name)
                if why:
                    skipped.append(
                        (printable(on_disk), Skip(UNSAFE_NAME, f"{why}; rename it to index it"))
                    )
                elif not is_ignored(self._canonical(rel, name) + "/x", self.ignores):
                    ruled = self.skip(self._canonical(rel, name), True) if self.skip else None
                    if ruled:
                        skipped.append((printable(on_disk) + "/", Skip(IGNORED, ruled)))
                    else:
                        subfolders.append(on_disk)
            elif name.lower().endswith(self.suffixes) and not is_link:
                why = unsafe_name(rel, name)
                if why:
                    skipped.append(
                        (printable(on_disk), Skip(UNSAFE_NAME, f"{why}; rename it to index it"))
                    )
                    continue
                try:
                    regular = entry.is_file()  # False for a FIFO, socket or device
                except OSError:
                    continue
                if not regular:
                    skipped.append((printable(on_disk), Skip(NOT_REGULAR, NOT_REGULAR_WHY)))
                    continue
                path = self._canonical(rel, name)
                if self._file_ignored(path):
                    continue
                ruled = self.skip(path, False) if self.skip else None
                if ruled:
                    skipped.append((printable(on_disk), Skip(IGNORED, ruled)))
                else:
                    notes.append(path)
        trusted = time.time_ns() - mtime > RACY_NS
        return _Folder(
            mtime, trusted, tuple(sorted(notes)), tuple(sorted(subfolders)), tuple(skipped)
        )

    def _canonical(self, folder: str, name: str) -> str:
        """`normalize_rel_path(folder/name)` for a safe entry (`unsafe_name` is None) of a
        listed folder: the folder's own form is known, so only the name needs NFC."""
        base = self._nfc.get(folder)
        if base is None:
            return normalize_rel_path(f"{folder}/{name}" if folder else name)
        own = name if name.isascii() else unicodedata.normalize("NFC", name)
        return f"{base}/{own}" if base else own

    def _file_ignored(self, path: str) -> bool:
        """`is_ignored(path)` for a note of a listed folder: its folders were judged when the
        listing walked into them, so only the whole path is left to match (both kinds of
        pattern, as `is_ignored` matches them)."""
        for pattern in self.ignores:
            if pattern.startswith(ROOTED):
                rooted = pattern[1:]
                if rooted and rooted_pattern(rooted).fullmatch(unicodedata.normalize("NFC", path)):
                    return True
            elif fnmatch.fnmatchcase(path, pattern):
                return True
        return False


def unsafe_name(folder: str, name: str) -> str | None:
    """Why an entry of `folder` (its on-disk relative path, "" for the vault's root) has no
    safe vault-relative form, or None when it has one (see the module doc)."""
    if "\\" in name:
        return "the name holds a backslash, which Obsidian and Windows read as a folder separator"
    if not folder and len(name) > 1 and name[1] == ":":
        return "a top-level name with a colon as its second character reads as a Windows drive"
    if not _is_utf8(name):
        return "the name is not valid UTF-8"
    return None


def printable(on_disk: str) -> str:
    """An on-disk relative path as text that can be stored and shown (undecodable bytes as
    U+FFFD)."""
    return (
        on_disk
        if _is_utf8(on_disk)
        else on_disk.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    )


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # os.listdir's surrogate escapes of undecodable bytes
        return False
    return True


def iter_note_paths(vault_root: Path, ignores: Iterable[str] = DEFAULT_IGNORES) -> Iterator[str]:
    """Vault-relative paths of every markdown note, sorted, skipping ignored and hidden folders
    and symlinks (a link could point outside the vault): a one-off `VaultListing`."""
    yield from VaultListing(vault_root, ignores).paths()
