"""The indexed notes as a link-resolution index (`vault.links.NoteIndex`), kept in step with a
manifest: search resolves the links of its top passages on every query, so the index of note
names is rebuilt only when the manifest changed (its change token), not per query."""

from __future__ import annotations

import threading

from vault_rag.index.manifest import Manifest
from vault_rag.vault.links import NoteIndex


class NoteNames:
    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._lock = threading.Lock()
        self._token: tuple[int, int] | None = None
        self._notes = NoteIndex(())

    def current(self) -> NoteIndex:
        """The notes the index holds now (a write in this process or another is seen)."""
        with self._lock:
            token = self.manifest.change_token()
            if token != self._token:
                self._notes = NoteIndex(self.manifest.notes())
                self._token = token
            return self._notes
