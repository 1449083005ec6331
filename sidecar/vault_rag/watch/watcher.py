"""Follow changes made outside Obsidian (git pull, sync, another editor) with watchdog.

File events are collected into a batch that is flushed once the vault has been quiet for
`debounce` seconds (or at the latest `max_delay` after the first event, so a never-quiet vault
still gets indexed): a `git checkout` of 1,000 files is one batch, not 1,000 index runs.

The watcher only says *which paths* changed. The writer decides what happened by looking at the
disk when the batch runs (`index/updates/writer.py`): a moved file is a deleted path plus a created
one with the same bytes, recorded as a rename (its vectors are reused); a path whose stat matches
the manifest (the plugin already posted that save) is skipped; a file still being written is
retried. Folders that are moved or deleted as a whole are passed on as folders, since a platform may
report only the folder.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from vault_rag.vault.paths import UnsafePathError, to_rel_path
from vault_rag.vault.reader import is_note_path, is_watched_folder

__all__ = ["VaultWatcher", "is_note_path", "is_watched_folder"]

log = logging.getLogger(__name__)

OnBatch = Callable[[set[str], set[str]], None]  # (note paths, folder paths)
_SKIPPED_EVENTS = {"opened", "closed_no_write"}  # reads, not changes


class VaultWatcher:
    def __init__(
        self,
        vault_root: Path,
        on_batch: OnBatch,
        *,
        ignores: Iterable[str] = (),
        suffixes: tuple[str, ...] = (".md",),
        debounce: float = 0.5,
        max_delay: float = 5.0,
    ) -> None:
        self.root = vault_root.resolve()
        self.on_batch = on_batch
        self.ignores = tuple(ignores)
        self.suffixes = suffixes  # the file kinds indexed (`sources/registry.py`)
        self.debounce = debounce
        self.max_delay = max(max_delay, debounce)
        self.events_seen = 0
        self.batches = 0
        self._paths: set[str] = set()
        self._dirs: set[str] = set()
        self._first = self._last = 0.0
        self._stopping = False
        self._cond = threading.Condition()
        self._observer = Observer()
        self._thread = threading.Thread(target=self._loop, name="vault-rag-watch", daemon=True)

    def start(self) -> None:
        self._observer.schedule(_Handler(self), str(self.root), recursive=True)
        self._observer.start()
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join(timeout)
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._paths) + len(self._dirs)

    # -- events (observer thread) -----------------------------------------------------------
    def handle(self, event: FileSystemEvent) -> None:
        if event.event_type in _SKIPPED_EVENTS:
            return
        raw = [event.src_path, getattr(event, "dest_path", "") or ""]
        paths: set[str] = set()
        dirs: set[str] = set()
        for item in raw:
            rel = self._rel(item)
            if rel is None:
                continue
            if not event.is_directory:
                if is_note_path(rel, self.ignores, self.suffixes):
                    paths.add(rel)
            elif event.event_type in ("created", "deleted", "moved") and is_watched_folder(
                rel, self.ignores
            ):
                dirs.add(rel)
        if not paths and not dirs:
            return
        now = time.monotonic()
        with self._cond:
            if not self._paths and not self._dirs:
                self._first = now
            self._last = now
            self._paths |= paths
            self._dirs |= dirs
            self.events_seen += 1
            self._cond.notify_all()

    def _rel(self, raw: str | bytes) -> str | None:
        if not raw:
            return None
        text = raw.decode(errors="surrogateescape") if isinstance(raw, bytes) else raw
        try:
            return to_rel_path(self.root, Path(text))
        except (ValueError, UnsafePathError):
            return None  # outside the vault (moved in or out), or the root itself

    # -- batching (own thread) --------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not (self._paths or self._dirs) and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                now = time.monotonic()
                quiet, age = now - self._last, now - self._first
                if quiet < self.debounce and age < self.max_delay:
                    self._cond.wait(min(self.debounce - quiet, self.max_delay - age))
                    continue
                paths, dirs = self._paths, self._dirs
                self._paths, self._dirs = set(), set()
            self.batches += 1
            try:
                self.on_batch(paths, dirs)
            except Exception:  # never let one bad batch stop the watcher
                log.exception("vault watcher: batch of %d paths failed", len(paths))


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: VaultWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher.handle(event)
