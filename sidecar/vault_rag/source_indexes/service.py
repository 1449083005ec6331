"""The sources of one running server: their indexes opened once (on first search), indexed by
a start-up scan on a thread of their own (so the vault's start is never held up by a big code
tree), and closed with the server. A source's index is searched while it is being indexed, as
the vault's is while its writer runs."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from vault_rag.index.vault_index import MANIFEST_FILE, VaultIndex
from vault_rag.settings import Settings
from vault_rag.source_indexes.collections import (
    SourceRun,
    index_sources,
    open_source,
    source_data_dir,
)
from vault_rag.source_indexes.specs import VAULT, all_specs

log = logging.getLogger(__name__)


class ServedSources:
    def __init__(self, settings: Settings, vault_index: VaultIndex) -> None:
        self.settings, self.vault_index = settings, vault_index
        self._open: dict[str, VaultIndex] = {}
        self._lock = threading.Lock()
        self.runs: list[SourceRun] = []  # the start-up scan's outcome, per source
        self.scanning = False
        self._thread: threading.Thread | None = None

    def names(self) -> list[str]:
        return [VAULT, *(s.name for s in all_specs(self.settings, self.vault_index.data_dir))]

    def indexes(self, wanted: list[str] | None) -> dict[str, VaultIndex]:
        """The indexes a search covers (`retrieval/collections.choose`), opened once."""
        from vault_rag.retrieval.collections import choose

        specs = {s.name: s for s in all_specs(self.settings, self.vault_index.data_dir)}
        names = choose([VAULT, *specs], wanted, self.settings.default_collections == "vault")
        found: dict[str, VaultIndex] = {}
        with self._lock:
            for name in names:
                if name == VAULT:
                    found[name] = self.vault_index
                    continue
                index = self._open.get(name)
                if index is None:
                    folder = source_data_dir(self.vault_index.data_dir, name)
                    if not (folder / MANIFEST_FILE).is_file():
                        continue  # not indexed yet
                    root = Path(specs[name].path).expanduser()
                    index = open_source(self.settings, specs[name], root, self.vault_index.provider)
                    self._open[name] = index
                found[name] = index
        return found

    def start_scan(self) -> None:
        """Index every source once, on a thread (no source declared: nothing at all)."""
        if not all_specs(self.settings, self.vault_index.data_dir):
            return
        self.scanning = True
        self._thread = threading.Thread(target=self._scan, name="sources-scan", daemon=True)
        self._thread.start()

    def _scan(self) -> None:
        try:
            self.runs = index_sources(self.settings, self.vault_index.provider)
            for run in self.runs:
                if run.error:
                    log.warning("%s", run.error)
            with self._lock:  # opened afresh on next search: they see the new state
                for index in self._open.values():
                    index.close()
                self._open.clear()
        except Exception:
            log.exception("the start-up scan of the sources failed")
        finally:
            self.scanning = False

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            for index in self._open.values():
                index.close()
            self._open.clear()
