"""The one place a note file is stat-ed, read and hashed for the index.

The scan, disk batches, posted notes, renames and dependents all use `read_note_file`, so they
agree on what "the file changed" means: the manifest's `NoteRecord` (sha256, mtime, size).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vault_rag.index.manifest import NoteRecord
from vault_rag.vault.paths import resolve_inside


class FileInFlux(OSError):
    """The file changed while it was read (still being written): look again later."""


class NotRegularFileError(FileNotFoundError):
    """A FIFO, socket, device or folder named like a note: no note file is there."""


@dataclass(frozen=True)
class NoteFile:
    record: NoteRecord
    same: bool  # the content is the `known` record's (by stat, else by hash)
    data: bytes | None  # the bytes read; None when the stat matched and nothing was read


def read_note_file(
    root: Path, rel: str, known: NoteRecord | None = None, *, walked: bool = False
) -> NoteFile:
    """Stat the file; when the stat differs from `known` (or there is none), read and hash it.
    A file whose size or mtime moves while it is read raises `FileInFlux`; a missing file
    `FileNotFoundError` (`NotRegularFileError` for a FIFO, socket, device or folder, which is
    never opened); a path outside the vault `UnsafePathError`.

    `walked`: `rel` is a path the vault listing found under the (resolved) `root`, so it is
    inside the vault and no symlink; the path checks, ~0.1 ms a note (a scan of 10,000 notes
    spent most of its time there), are then skipped unless the file is not at `root / rel`
    (an NFD name on disk)."""
    absolute: Path | None = None
    if walked:
        try:
            before = os.stat(os.path.join(root, rel))  # (no Path object: 10,000 of them add up)
        except FileNotFoundError:
            walked = False
    if not walked:
        absolute = resolve_inside(root, rel)
        before = absolute.stat()
    if not stat.S_ISREG(before.st_mode):  # a FIFO would block the read (and the writer)
        raise NotRegularFileError(rel)
    if known and known.mtime_ns == before.st_mtime_ns and known.size == before.st_size:
        return NoteFile(known, True, None)
    if absolute is None:  # it is read: through the path checks after all
        absolute = resolve_inside(root, rel)
    data = absolute.read_bytes()
    after = absolute.stat()
    moved = (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size)
    if moved or len(data) != after.st_size:
        raise FileInFlux(rel)
    digest = hashlib.sha256(data).hexdigest()
    record = NoteRecord(rel, digest, after.st_mtime_ns, after.st_size)
    return NoteFile(record, bool(known and known.file_hash == digest), data)
