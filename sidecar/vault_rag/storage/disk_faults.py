"""Failures of the disk under the data dir, told apart from damage to its files.

A full disk, a read-only mount, a missing permission or an I/O error make SQLite and Chroma
fail as loudly as a damaged file does ("disk I/O error", "database or disk is full"). Setting
files aside then (`maintenance/doctor.py`) would throw away healthy conversations and a whole index
for a problem that goes away when space returns. So every failure is first asked `disk_fault`: when
it is one of these, the command says so and stops, touching nothing; only a check that fails on a
file that could be read is damage.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Literal

Kind = Literal["disk_full", "read_only", "permission", "io_error", "busy"]

# Exit code of a command stopped by a disk fault (1: other errors, 4: the port is in use).
EXIT_CODE = 5
# Below this many free bytes a write failure is put down to a full disk.
NEARLY_FULL = 1 << 20

_ERRNO_KINDS: dict[int, Kind] = {
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "disk_full",
    errno.EROFS: "read_only",
    errno.EACCES: "permission",
    errno.EPERM: "permission",
    errno.EIO: "io_error",
}
# SQLite's primary result codes (the low byte of an extended code) that are not damage.
# SQLITE_CORRUPT (11) and SQLITE_NOTADB (26) are: they are left to the damage checks.
_SQLITE_KINDS: dict[int, Kind] = {
    13: "disk_full",  # SQLITE_FULL
    8: "read_only",  # SQLITE_READONLY
    3: "permission",  # SQLITE_PERM
    23: "permission",  # SQLITE_AUTH
    10: "io_error",  # SQLITE_IOERR (an ENOSPC while growing -shm or -wal comes as this)
    14: "io_error",  # SQLITE_CANTOPEN
    5: "busy",  # SQLITE_BUSY
    6: "busy",  # SQLITE_LOCKED
}
# The same failures as other layers word them (chromadb's Rust core passes SQLite's and the
# OS's messages through as text).
_MESSAGES: tuple[tuple[str, Kind], ...] = (
    ("database or disk is full", "disk_full"),
    ("no space left on device", "disk_full"),
    ("disk quota exceeded", "disk_full"),
    ("read-only file system", "read_only"),
    ("attempt to write a readonly database", "read_only"),
    ("readonly database", "read_only"),
    ("permission denied", "permission"),
    ("disk i/o error", "io_error"),
    ("input/output error", "io_error"),
    ("unable to open database file", "io_error"),
    ("database is locked", "busy"),
)


class DataDirUnavailableError(RuntimeError):
    """The data dir cannot be used for a reason outside its files; nothing was changed."""

    def __init__(self, kind: Kind, where: Path | None, detail: str) -> None:
        self.kind, self.where, self.detail = kind, where, detail
        super().__init__(_explain(kind, where, detail))


def disk_fault(
    error: BaseException | None, where: Path | None = None
) -> DataDirUnavailableError | None:
    """The disk fault behind `error` (anywhere in its chain of causes), or None when it is
    something else, such as real damage. `where`: the data dir, to look at its file system."""
    chain: BaseException | None = error
    while chain is not None:
        if isinstance(chain, DataDirUnavailableError):
            return chain
        kind = _kind_of(chain)
        if kind is not None:
            place = where or _filename(chain)
            kind = _refine(kind, place, chain)
            if kind is not None:
                return DataDirUnavailableError(kind, place, _detail(chain))
        chain = chain.__cause__ or chain.__context__
    return None


def check_room(data_dir: Path) -> None:
    """Raise `DataDirUnavailableError` when the data dir's file system is read-only or (nearly)
    full. Asked before any file is set aside as damaged: whatever an error said, a disk in this
    state explains it better than damage does, and a rebuild could not be written anyway."""
    try:
        info = os.statvfs(_existing(data_dir))
    except (OSError, AttributeError):  # (no statvfs on Windows)
        return
    if info.f_flag & os.ST_RDONLY:
        raise DataDirUnavailableError("read_only", data_dir, "mounted read-only")
    free = info.f_bavail * info.f_frsize
    if free < NEARLY_FULL:
        raise DataDirUnavailableError("disk_full", data_dir, f"{free} bytes free")


def _kind_of(error: BaseException) -> Kind | None:
    if isinstance(error, OSError) and error.errno in _ERRNO_KINDS:
        return _ERRNO_KINDS[error.errno]
    code = _sqlite_code(error)
    if code is not None:
        return _SQLITE_KINDS.get(code & 0xFF)
    text = str(error).lower()
    return next((kind for needle, kind in _MESSAGES if needle in text), None)


def _refine(kind: Kind, where: Path | None, error: BaseException) -> Kind | None:
    """SQLite reports a full disk or a read-only mount as a plain I/O error when it fails to
    grow or create a side file, and "readonly database" for files that are not on a read-only
    mount at all: the file system itself says which. None: not a disk fault after all (a
    database file moved away under an open connection, SQLITE_READONLY_DBMOVED)."""
    if kind == "read_only" and ("1032" in str(error) or _sqlite_code(error) == 1032):
        return None
    if kind not in ("io_error", "permission", "read_only") or where is None:
        return kind
    try:
        info = os.statvfs(_existing(where))
    except (OSError, AttributeError):  # (no statvfs on Windows)
        return kind
    if info.f_flag & os.ST_RDONLY:
        return "read_only"
    if kind == "io_error" and info.f_bavail * info.f_frsize < NEARLY_FULL:
        return "disk_full"
    if kind == "read_only":  # a writable mount: the file's or folder's permissions
        return "permission"
    return kind


def _sqlite_code(error: BaseException) -> int | None:
    return getattr(error, "sqlite_errorcode", None) if isinstance(error, sqlite3.Error) else None


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def _filename(error: BaseException) -> Path | None:
    name = getattr(error, "filename", None)
    return Path(name) if isinstance(name, str) and name else None


def _detail(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def _explain(kind: Kind, where: Path | None, detail: str) -> str:
    place = str(where) if where is not None else "the data dir"
    nothing = "nothing was moved or deleted"
    if kind == "disk_full":
        return (
            f"disk full: no space left for {place} ({detail}); {nothing}. "
            "Free some space and run the command again"
        )
    if kind == "read_only":
        return f"read-only: {place} is on a read-only file system ({detail}); {nothing}"
    if kind == "permission":
        return f"no permission to write {place} ({detail}); {nothing}"
    if kind == "busy":
        return f"{place} is locked by another process ({detail}); {nothing}. Try again"
    return f"I/O error on {place} ({detail}); {nothing}. Check the disk, then run the command again"
