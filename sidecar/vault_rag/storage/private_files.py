"""Private data dirs: the index holds the user's note text, so nobody else may read it.

The data dir is created 0700 and every file in it 0600. SQLite, Chroma and the lexical index
create their files themselves (Chroma adds segment files whenever it likes), so the CLI sets the
process umask to 077 once at start (`private_umask`); files written into the *vault* (promoted
answers) are given the user's own umask back explicitly (`vault_file_mode`, `make_vault_dirs`),
so they look like any other note. A data dir made before this (0755 / 0644) is tightened when
it is opened (`private_dir`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600
_user_umask: int | None = None  # the umask the process started with (for vault writes)


def private_umask() -> None:
    """Make every file this process creates private from now on (idempotent; POSIX only)."""
    global _user_umask
    if os.name != "posix" or _user_umask is not None:
        return
    _user_umask = os.umask(PRIVATE_UMASK)


def user_umask() -> int:
    """The user's umask (as it was before `private_umask`)."""
    if _user_umask is not None:
        return _user_umask
    current = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(current)
    return current


def vault_file_mode() -> int:
    return 0o666 & ~user_umask()


def make_vault_dirs(path: Path) -> None:
    """`mkdir -p` inside the vault with the user's own folder mode (not the private one)."""
    missing = []
    for parent in (path, *path.parents):
        if parent.exists():
            break
        missing.append(parent)
    path.mkdir(parents=True, exist_ok=True)
    if os.name == "posix":
        for created in missing:
            created.chmod(0o777 & ~user_umask())


def private_dir(path: Path) -> Path:
    """Create `path` (0700), or tighten an existing one and everything in it to 0700 / 0600."""
    existed = path.exists()
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if os.name != "posix":
        return path
    _tighten(path, DIR_MODE)
    if existed:
        for root, dirs, files in os.walk(path):
            for name in dirs:
                _tighten(Path(root) / name, DIR_MODE)
            for name in files:
                _tighten(Path(root) / name, FILE_MODE)
    return path


def _tighten(path: Path, mode: int) -> None:
    try:
        info = path.lstat()
        if not stat.S_ISLNK(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
            path.chmod(stat.S_IMODE(info.st_mode) & mode)
    except OSError:  # vanished meanwhile, or not ours: nothing to tighten
        pass
