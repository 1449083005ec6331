"""The sources of one running server: their indexes opened once (on first search), indexed by
a start-up scan on a thread of their own (so the vault's start is never held up by a big code
tree), followed by a watcher each (`watch`: a change under a source's folder, or to one of its
`.gitignore` files, re-indexes that source once the folder has been quiet for
`watch_debounce`; the listing's per-folder cache keeps such a run cheap), and closed with the
server. A source's index is searched while it is being indexed, as the vault's is while its
writer runs."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from vault_rag.index.vault_index import MANIFEST_FILE, VaultIndex
from vault_rag.settings import Settings, SourceSpec
from vault_rag.source_indexes.collections import (
    SourceRun,
    index_source,
    index_sources,
    kinds_for,
    open_source,
    remove_source_data,
    source_data_dir,
)
from vault_rag.source_indexes.manage import add_source, forget_source
from vault_rag.source_indexes.specs import (
    VAULT,
    SourceError,
    all_specs,
    check_specs,
    path_rules,
    source_root,
)

log = logging.getLogger(__name__)


class _Refresher:
    """A web source's refresh loop, stopped like a watcher."""

    def __init__(self, stopping: threading.Event, thread: threading.Thread) -> None:
        self.stopping, self.thread = stopping, thread

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)


class ServedSources:
    def __init__(self, settings: Settings, vault_index: VaultIndex) -> None:
        self.settings, self.vault_index = settings, vault_index
        self._open: dict[str, VaultIndex] = {}
        self._lock = threading.Lock()
        self.runs: list[SourceRun] = []  # the start-up scan's outcome, per source
        self.scanning = False
        self._thread: threading.Thread | None = None
        self._indexing = threading.Lock()  # one index run at a time: the scan or a watcher's
        self.watchers: dict[str, Any] = {}  # source name → its `watch.VaultWatcher`
        self.reindexed: dict[str, int] = {}  # source name → runs its watcher started (status)
        self.watching = False  # `watch` ran: a source added later is followed too
        self.adding: set[str] = set()  # sources added over HTTP whose first index run is going
        self._changing = threading.Lock()  # one add or remove at a time (`sources.json`)

    def names(self) -> list[str]:
        return [VAULT, *(s.name for s in all_specs(self.settings, self.vault_index.data_dir))]

    def _declared(self, name: str) -> bool:
        try:
            return name in self.names()
        except SourceError:  # `sources.json` unreadable: index as before, the scan reports it
            return True

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
                    root = source_root(specs[name], self.vault_index.data_dir)
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

    def watch(self) -> None:
        """Follow each source's folder (those that can be read; none declared: nothing)."""
        specs = all_specs(self.settings, self.vault_index.data_dir)
        checked = check_specs(
            self.settings.vault or self.vault_index.vault_root, specs, self.vault_index.data_dir
        )
        self.watching = True
        for spec in specs:
            root = checked[spec.name]
            if isinstance(root, SourceError):
                continue  # reported by the scan and `vault-rag status`
            self._follow(spec, root)

    def _follow(self, spec: Any, root: Path) -> None:
        """Watch one source's folder, or schedule a web source's refresh."""
        from vault_rag.watch.watcher import VaultWatcher

        if spec.kind == "web":  # crawled on a schedule, not watched
            self._schedule(spec, root)
            return
        suffixes = (*kinds_for(spec, self.settings).suffixes, ".gitignore")
        rules = path_rules(spec, root)

        def changed(paths: set[str], dirs: set[str], spec=spec, root=root, rules=rules) -> None:
            # a build writing into Binaries/ or an ignored folder starts no index run
            if any(p.endswith(".gitignore") or not rules(p, False) for p in paths) or any(
                not rules(d, True) for d in dirs
            ):
                self._reindex(spec, root)

        watcher = VaultWatcher(
            root,
            changed,
            suffixes=suffixes,
            debounce=self.settings.watch_debounce,
            max_delay=self.settings.watch_max_delay,
        )
        try:
            watcher.start()
        except OSError as exc:  # e.g. the inotify limit: indexed at the next start instead
            log.warning("cannot watch source %s (%s)", spec.name, exc)
            return
        self.watchers[spec.name] = watcher

    def _schedule(self, spec: Any, root: Path) -> None:
        """Re-crawl a web source every `web_refresh_hours` (the start-up scan crawls it
        first); conditional requests make an unchanged site cheap."""
        period = self.settings.web_refresh_hours * 3600
        stopping = threading.Event()

        def loop() -> None:
            while not stopping.wait(period):
                self._reindex(spec, root)

        thread = threading.Thread(target=loop, name=f"web-refresh-{spec.name}", daemon=True)
        thread.start()
        self.watchers[spec.name] = _Refresher(stopping, thread)

    def _reindex(self, spec: Any, root: Path) -> SourceRun | None:
        with self._indexing:
            if not self._declared(spec.name):  # removed meanwhile: its data stays gone
                return None
            run = index_source(self.settings, spec, root, self.vault_index.provider)
        self.reindexed[spec.name] = self.reindexed.get(spec.name, 0) + 1
        if run.error:
            log.warning("%s", run.error)
        with self._lock:  # opened afresh on next search: it sees the new state
            index = self._open.pop(spec.name, None)
            if index is not None:
                index.close()
        return run

    # --- over HTTP (`POST /v1/sources`, `DELETE /v1/sources/{name}`) ----------------------
    def add(self, spec: SourceSpec) -> None:
        """Keep a new source (`manage.add_source`: the CLI's checks; raises SourceError), follow
        it as the start-up did (when this server watches) and index it now, on a thread of its
        own: searchable once that run ends (`GET /v1/collections`: `scanning`)."""
        vault = self.settings.vault or self.vault_index.vault_root
        with self._changing:
            add_source(self.settings, vault, spec)
            root = check_specs(vault, [spec], self.vault_index.data_dir)[spec.name]
            if isinstance(root, SourceError):  # checked a moment ago: only a race gets here
                raise root
            self.adding.add(spec.name)
        if self.watching:
            self._follow(spec, root)

        def first() -> None:
            try:
                self._reindex(spec, root)
            except Exception:
                log.exception("indexing the new source %s failed", spec.name)
            finally:
                self.adding.discard(spec.name)

        threading.Thread(target=first, name=f"source-add-{spec.name}", daemon=True).start()

    def remove(self, name: str) -> bool:
        """Forget an added source (`manage.forget_source`; raises SourceError), stop following
        it and delete its index once any index run going has ended; whether it had one."""
        with self._changing:
            forget_source(self.settings, name)
        watcher = self.watchers.pop(name, None)
        if watcher is not None:
            watcher.stop()
        with self._indexing:  # a run of it going ends first; a later one sees it gone
            with self._lock:
                index = self._open.pop(name, None)
                if index is not None:
                    index.close()
            return remove_source_data(self.settings, name)

    def _scan(self) -> None:
        try:
            with self._indexing:
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
        for watcher in self.watchers.values():
            watcher.stop()
        self.watchers.clear()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            for index in self._open.values():
                index.close()
            self._open.clear()
