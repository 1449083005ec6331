"""Each source beside the vault as its own index: its own data dir under the vault's
(`<data dir>/sources/<name>/`), so its own manifest, its own lexical index and its own
vector-store collection (embedded Chroma in that folder; on a server, a collection named from
the source's path and data dir, `index/stores/naming.py`), so sources never mix. The vault's
own index is untouched: with no source declared, nothing here runs.

`index_sources` is what `vault-rag index` and the server's start-up scan call after the vault:
each source checked (`specs.py`), opened and indexed on its own, a bad one reported without
stopping the rest; the data of a source no longer declared is removed."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vault_rag.chunking.pipeline import chunk_options
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.graph_store.sync import graph_path, sync_graph
from vault_rag.index.stores.factory import open_vector_store
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.updates.records import IndexSummary
from vault_rag.index.vault_index import MANIFEST_FILE, VaultIndex
from vault_rag.maintenance import doctor
from vault_rag.settings import DEFAULT_IGNORES, Settings, SourceSpec
from vault_rag.source_indexes.specs import (
    SOURCES_DIR,
    VAULT,
    SourceError,
    all_specs,
    check_specs,
    path_rules,
    source_data_dir,
    source_root,
)
from vault_rag.sources.code.kind import CodeKind
from vault_rag.sources.pdf import PdfKind
from vault_rag.sources.registry import SourceRegistry, markdown_only, source_registry
from vault_rag.sources.web.crawl import CrawlOptions, CrawlReport, crawl
from vault_rag.sources.web.kind import WebKind
from vault_rag.sources.web.state import STATE_FILE

__all__ = ["SOURCES_DIR", "source_data_dir"]  # (re-exported: their home is specs.py)
log = logging.getLogger(__name__)


def kinds_for(spec: SourceSpec, settings: Settings) -> SourceRegistry:
    if spec.kind == "code":
        return SourceRegistry([CodeKind.from_settings(settings)])
    if spec.kind == "web":
        folder = source_data_dir(settings.resolved_data_dir(), spec.name)
        return SourceRegistry([WebKind(folder / STATE_FILE, PdfKind.from_settings(settings))])
    if spec.kind == "markdown":
        return markdown_only()
    return source_registry(settings)  # another vault: every kind, its embeds resolved in it


def open_source(
    settings: Settings,
    spec: SourceSpec,
    root: Path,
    provider: EmbeddingProvider,
    *,
    recover: bool = True,
) -> VaultIndex:
    """The source's index (damaged files set aside first, as for the vault's, unless
    `recover` is off: `vault-rag doctor` looks before it repairs)."""
    data_dir = source_data_dir(settings.resolved_data_dir(), spec.name)
    for action in doctor.recover(data_dir) if recover else []:
        log.warning("source %s: %s", spec.name, action)
    store, info = open_vector_store(settings, root, data_dir, provider.model_id)
    index = VaultIndex(root, data_dir, provider, store=store, store_info=info)
    index.manifest.set_meta("source_root", str(root))  # (removing it finds its collection)
    return index


def indexed_sources(settings: Settings) -> list[tuple[SourceSpec, Path, Path]]:
    """(spec, its data dir, its root) of each declared source that has an index (`doctor`
    and `migrate` cover them). The root is the one it was indexed from (the store's collection
    is named from it), else the declared path."""
    from vault_rag.index.manifest import Manifest

    data_dir = settings.resolved_data_dir()
    found = []
    for spec in all_specs(settings, data_dir):
        folder = source_data_dir(data_dir, spec.name)
        if not (folder / MANIFEST_FILE).is_file():
            continue
        manifest = Manifest(folder / MANIFEST_FILE)
        try:
            recorded = manifest.get_meta("source_root")
        finally:
            manifest.close()
        found.append((spec, folder, Path(recorded) if recorded else source_root(spec, data_dir)))
    return found


def make_source_indexer(settings: Settings, spec: SourceSpec, index: VaultIndex) -> Indexer:
    return Indexer(
        index,
        ignores=DEFAULT_IGNORES,
        chunk_options=chunk_options(settings, index.provider),
        batch_size=settings.embeddings_batch_size,
        sources=kinds_for(spec, settings),
        skip_path=None if spec.kind == "web" else path_rules(spec, index.vault_root),
        sections=settings.cite_spans,
    )


@dataclass
class SourceRun:
    name: str
    summary: IndexSummary | None = None
    error: str | None = None
    crawl: CrawlReport | None = None  # a web source's crawl before its index run
    removed: bool = False  # its data was removed (no longer declared)


def index_sources(
    settings: Settings,
    provider: EmbeddingProvider,
    *,
    rebuild: bool = False,
    run: Callable[[Indexer], IndexSummary] | None = None,
) -> list[SourceRun]:
    """Index every declared source; remove the data of sources no longer declared."""
    if settings.vault is None:
        raise ValueError("no vault configured")
    data_dir = settings.resolved_data_dir()
    runs = [SourceRun(name, removed=True) for name in remove_undeclared(settings)]
    specs = all_specs(settings, data_dir)
    checked = check_specs(settings.vault, specs, data_dir)
    for spec in specs:
        root = checked[spec.name]
        if isinstance(root, SourceError):
            runs.append(SourceRun(spec.name, error=str(root)))
            continue
        runs.append(index_source(settings, spec, root, provider, rebuild=rebuild, run=run))
    return runs


def index_source(
    settings: Settings,
    spec: SourceSpec,
    root: Path,
    provider: EmbeddingProvider,
    *,
    rebuild: bool = False,
    run: Callable[[Indexer], IndexSummary] | None = None,
) -> SourceRun:
    """Index one checked source (`index_sources`, and the server's watcher of the source). A
    web source is crawled first (into its mirror folder, `sources/web/crawl.py`); then its
    index reads the mirror like any folder, so a page changes the index only when its text
    did, and a page the crawl removed leaves it."""
    report = None
    if spec.kind == "web":
        try:
            report = crawl(
                web_options(settings, spec),
                source_data_dir(settings.resolved_data_dir(), spec.name),
            )
        except Exception as exc:  # the pages already kept are still indexed
            log.warning("source %s: the crawl failed: %s", spec.name, exc)
    index = open_source(settings, spec, root, provider)
    try:
        indexer = make_source_indexer(settings, spec, index)
        if rebuild:
            with indexer.lock:
                index.clear()
        summary = run(indexer) if run is not None else indexer.run()
        if spec.kind == "code":  # its relations follow the index (`graph_store/sync.py`)
            _sync_code_graph(index, settings, spec.name)
        return SourceRun(spec.name, summary=summary, crawl=report)
    except Exception as exc:  # one source's failure must not stop the others
        return SourceRun(spec.name, error=f"source {spec.name!r}: {exc}")
    finally:
        index.close()


def web_options(settings: Settings, spec: SourceSpec) -> CrawlOptions:
    """A web source's crawl, bounded by the settings (`web_*`)."""
    return CrawlOptions(
        url=spec.url or "",
        include=spec.include,
        exclude=spec.exclude,
        max_pages=spec.max_pages or settings.web_max_pages,
        delay=settings.web_delay,
        timeout=settings.web_timeout,
        max_bytes=int(settings.web_max_page_mb * 1024 * 1024),
        max_retry_after=settings.web_max_retry_after,
    )


def _sync_code_graph(index: VaultIndex, settings: Settings, name: str) -> None:
    """The source's graph in step with its index; a graph SQLite finds damaged is set aside
    and built again (it holds nothing the tree does not)."""
    try:
        sync_graph(index, max_code_kb=settings.max_code_kb)
    except sqlite3.DatabaseError as exc:
        if doctor.damaged_database(exc) is None:
            raise
        path = graph_path(index)
        moved = doctor.set_aside(path, time.strftime("%Y%m%d-%H%M%S"))
        log.warning("source %s: its code graph is damaged (%s): moved to %s", name, exc, moved)
        sync_graph(index, max_code_kb=settings.max_code_kb)


def open_searched(
    settings: Settings, vault_index: VaultIndex, wanted: list[str] | None
) -> dict[str, VaultIndex]:
    """The indexes a search covers (`retrieval/collections.choose`), the vault's first; a
    source not yet indexed, or whose path is gone, is searched from what its index holds.
    `UnknownCollectionError` for a name that is neither the vault nor a source."""
    from vault_rag.retrieval.collections import choose

    data_dir = settings.resolved_data_dir()
    specs = {spec.name: spec for spec in all_specs(settings, data_dir)}
    names = choose([VAULT, *specs], wanted, settings.default_collections == "vault")
    indexes: dict[str, VaultIndex] = {}
    try:
        for name in names:
            if name == VAULT:
                indexes[name] = vault_index
                continue
            folder = source_data_dir(data_dir, name)
            if not (folder / MANIFEST_FILE).is_file():
                continue  # never indexed: nothing to search yet
            root = source_root(specs[name], data_dir)
            index = open_source(settings, specs[name], root, vault_index.provider)
            indexes[name] = index
            index.check_model()
    except BaseException:
        for index in indexes.values():
            if index is not vault_index:
                index.close()
        raise
    return indexes


def remove_source_data(settings: Settings, name: str) -> bool:
    """Delete one source's index (its folder; on a server, its collection too)."""
    folder = source_data_dir(settings.resolved_data_dir(), name)
    if not folder.exists():
        return False
    if settings.vector_store != "chroma":
        from vault_rag.index.manifest import Manifest

        manifest = Manifest(folder / "manifest.sqlite3")
        try:
            model_id = manifest.get_meta("model_id")
            root = manifest.get_meta("source_root")
        finally:
            manifest.close()
        if model_id and root:
            store, _ = open_vector_store(settings, Path(root), folder, model_id)
            store.reset()
    shutil.rmtree(folder)
    return True


def remove_undeclared(settings: Settings) -> list[str]:
    """Remove the index of every source folder no longer declared; their names."""
    folder = settings.resolved_data_dir() / SOURCES_DIR
    if not folder.is_dir():
        return []
    declared = {spec.name for spec in all_specs(settings, settings.resolved_data_dir())}
    gone = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name not in declared)
    for name in gone:
        remove_source_data(settings, name)
    return gone
