"""One note from disk to chunks: read → resolve embeds → chunk (shared by CLI and indexer)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vault_rag.chunking.chunker import ChunkOptions, chunk_note
from vault_rag.chunking.types import Chunk
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.settings import Settings
from vault_rag.vault.embeds import resolve_note
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.types import ResolvedNote, VaultWarning

# Bump whenever resolving or chunking would produce different chunks from the same files, for
# any source kind (notes, PDFs, canvases, code): the indexer then re-chunks every file (vectors
# are still reused by content hash). A change to one kind's own units bumps that kind's
# `version` instead (`kind_versions`): only the files of that kind are re-chunked.
# 4: units sized in the model's tokens, every unit keeps its own heading path (the title before
#    the first heading), small-to-big context recorded per chunk.
# 5: code: `#if`/`#endif` lines inside a list blanked before parsing (an initializer list in
#    LevelDB's util/env_posix.cc gave every later symbol a wrong path).
PIPELINE_VERSION = "5"


def pipeline_signature(options: ChunkOptions) -> str:
    """What decides the chunks besides the files: code version and chunking options."""
    unit = "tok" if options.size_in_tokens else "units"
    return (
        f"{PIPELINE_VERSION}:{options.target_min}-{options.target_max}{unit}"
        f":overlap{options.overlap_chars}:cap{options.max_tokens}:ctx{options.context_chars}"
    )


KIND_VERSIONS_META = "pipeline_kinds"  # manifest meta: the kind versions the index was cut with


def kind_versions(kinds: Iterable[object]) -> dict[str, str]:
    """Each source kind's own chunker version (its `version` attribute, e.g. the code kind's
    `CODE_UNITS_VERSION`), by kind name; kinds without one are covered by `PIPELINE_VERSION`
    alone."""
    found: dict[str, str] = {}
    for kind in kinds:
        version = getattr(kind, "version", "")
        if version:
            found[str(getattr(kind, "name", ""))] = str(version)
    return found


def stale_kinds(recorded: str | None, current: Mapping[str, str]) -> frozenset[str]:
    """The kinds whose files were cut by another version than `current` (`recorded`: the
    manifest's `KIND_VERSIONS_META`, None for an index from before kinds had versions)."""
    try:
        old = json.loads(recorded) if recorded else {}
    except ValueError:
        old = {}
    if not isinstance(old, dict):
        old = {}
    return frozenset(name for name, version in current.items() if old.get(name) != version)


def encode_kind_versions(current: Mapping[str, str]) -> str:
    return json.dumps(dict(sorted(current.items())))


def chunk_options(settings: Settings | None, provider: EmbeddingProvider) -> ChunkOptions:
    """The chunking the index uses: sizes in the model's own tokens, capped by its input
    limit. Every path that cuts notes (indexer, `vault-rag chunks`/`stats`) builds it here."""
    settings = settings or Settings.model_construct()  # the defaults, no file or environment
    return ChunkOptions(
        target_min=min(settings.chunk_min, settings.chunk_max),
        target_max=settings.chunk_max,
        overlap_chars=settings.chunk_overlap_chars,
        max_tokens=provider.max_tokens,
        count_tokens=provider.count_tokens,
        size_in_tokens=True,
        context_chars=settings.chunk_context_chars,
    )


@dataclass
class NoteChunks:
    note: ResolvedNote
    chunks: list[Chunk] = field(default_factory=list)

    @property
    def warnings(self) -> list[VaultWarning]:
        return self.note.warnings


def chunk_vault_note(
    vault_root: Path,
    rel_path: str,
    index: NoteIndex,
    options: ChunkOptions | None = None,
) -> NoteChunks:
    """Resolve one note's embeds and chunk it. Never raises for bad note content: problems are
    warnings on the result (unsafe paths still raise, they are caller bugs or attacks)."""
    note = resolve_note(vault_root, rel_path, index)
    return NoteChunks(note=note, chunks=chunk_note(note, options))
