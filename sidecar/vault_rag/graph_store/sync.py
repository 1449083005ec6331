"""Keep a code source's graph (`store.py`) in step with its index: after each index run
(`source_indexes/collections.index_source`), and before a graph question when the manifest
has moved on since (a source indexed before the graph existed gets it then).

The manifest says what is indexed: a file whose recorded hash differs from the graph's is
parsed again and its rows replaced, a file no longer in the manifest loses its rows, the rest
is untouched. Files are read through the code kind's own guards (size, binary, encoding,
minified): a file the index did not read has no relations either."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from vault_rag.graph_store.store import GRAPH_FILE, GraphStore
from vault_rag.index.vault_index import VaultIndex
from vault_rag.sources.code.kind import CodeKind
from vault_rag.sources.code.languages import CODE_SUFFIXES, parser_for, spec_for
from vault_rag.sources.code.relations import FileGraph, relations_of

log = logging.getLogger(__name__)
_BATCH = 200  # files per transaction
_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


@dataclass
class SyncSummary:
    parsed: int = 0
    removed: int = 0
    rebuilt: bool = False  # the store was written by another version: emptied, then filled


def graph_path(index: VaultIndex) -> Path:
    return index.data_dir / GRAPH_FILE


def open_graph(index: VaultIndex, max_code_kb: float = 1024.0) -> GraphStore:
    """The index's graph, brought up to date with its manifest first (cheap when it is)."""
    store = GraphStore(graph_path(index))
    try:
        if store.rebuilt or store.get_meta("manifest_revision") != str(index.manifest.revision()):
            sync_graph(index, store, max_code_kb)
    except BaseException:
        store.close()
        raise
    return store


def sync_graph(
    index: VaultIndex, store: GraphStore | None = None, max_code_kb: float = 1024.0
) -> SyncSummary:
    """Bring the graph of `index` (a code source's) in step with its manifest."""
    own = store is None
    store = store if store is not None else GraphStore(graph_path(index))
    with _lock_for(store.path):
        try:
            return _sync(index, store, CodeKind(max_code_kb))
        finally:
            if own:
                store.close()


def _sync(index: VaultIndex, store: GraphStore, kind: CodeKind) -> SyncSummary:
    summary = SyncSummary(rebuilt=store.rebuilt)
    revision = str(index.manifest.revision())
    wanted = {
        path: record.file_hash
        for path, record in index.manifest.notes().items()
        if path.lower().endswith(CODE_SUFFIXES)
    }
    known = store.files()
    gone = [path for path in known if path not in wanted]
    changed = [path for path, digest in sorted(wanted.items()) if known.get(path) != digest]
    with store.transaction() as conn:
        for path in gone:
            store.remove_file(conn, path)
    summary.removed = len(gone)
    for start in range(0, len(changed), _BATCH):
        parsed = [(p, _parse(index.vault_root, p, kind)) for p in changed[start : start + _BATCH]]
        with store.transaction() as conn:
            for path, (language, graph) in parsed:
                store.replace_file(conn, path, wanted[path], language, graph)
        summary.parsed += len(parsed)
    store.set_meta("manifest_revision", revision)
    store.rebuilt = False
    return summary


def _parse(root: Path, rel: str, kind: CodeKind) -> tuple[str, FileGraph]:
    """(language, graph) of one file; a file no grammar reads, or the guards refuse, has none."""
    spec = spec_for(rel)
    language = spec.name if spec is not None else rel.rsplit(".", 1)[-1].lower()
    text, problem = kind.read(root / rel)
    parser = parser_for(spec) if spec is not None else None
    if problem is not None or spec is None or parser is None:
        return language, FileGraph([])
    try:
        return language, relations_of(parser, spec, text.encode("utf-8"), text.splitlines())
    except (RecursionError, ValueError) as exc:  # a pathological tree: the file has no edges
        log.warning("graph: %s not read (%s)", rel, exc)
        return language, FileGraph([])


def _lock_for(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(path, threading.Lock())
