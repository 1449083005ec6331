"""Helpers for index tests: a counting wrapper around a real provider, vault copies, a vault
indexed with a code source declared beside it."""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from vault_rag.chunking.types import Chunk
from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.index.manifest import Manifest, NoteRecord
from vault_rag.index.section_vectors import section_texts
from vault_rag.index.vault_index import VaultIndex
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.settings import Settings, SourceSpec
from vault_rag.source_indexes.collections import index_sources, open_source
from vault_rag.source_indexes.specs import save_added


def section_texts_of(chunks: Iterable[Chunk]) -> list[str]:
    """The section texts the indexer embeds beside these units (one set per content hash,
    `index/section_vectors.py`): what a counting provider also sees."""
    unique = {c.content_hash: c for c in chunks}
    return [text for chunk in unique.values() for text in section_texts(chunk)]


class CountingProvider:
    """Wraps a real provider; records every text the indexer asks to embed.

    Vectors are memoised by text so many tests can re-index the same vault with the real model
    without paying for it again; the counts still show exactly what the indexer requested.
    """

    def __init__(self, inner: EmbeddingProvider, model_id: str | None = None) -> None:
        self.inner = inner
        self.model_id = model_id or inner.model_id
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self.embedded: list[str] = []
        self._memo: dict[str, list[float]] = {}

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            self._memo.update(zip(todo, self.inner.embed_documents(todo), strict=True))
        return [self._memo[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    def reset(self) -> None:
        self.embedded.clear()


def copy_vault(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def _unit(note: str, n: int, content_hash: str) -> Chunk:
    return Chunk(
        id=f"{note}#{n}",
        note_path=note,
        text=f"text {n}",
        embed_text=f"text {n}",
        content_hash=content_hash,
        hierarchy_path="",
        anchor="",
        line_start=n + 1,
        line_end=n + 1,
        has_code=False,
        size=2,
        title=note,
        origin=note,
    )


def store_vectors(manifest: Manifest, note: str, vectors: dict[str, list[float]]) -> None:
    """Record `note` with one unit per vector and mark them embedded."""
    chunks = [_unit(note, i, h) for i, h in enumerate(vectors)]
    manifest.replace_note(NoteRecord(note, note, 0, 0), chunks, [], [])
    manifest.cache_vectors(vectors)
    manifest.mark_embedded(c.id for c in chunks)


@contextmanager
def vault_with_code_source(
    vault: Path, repo: Path, data: Path, name: str
) -> Iterator[tuple[Settings, VaultIndex, VaultIndex]]:
    """`vault` and the code tree `repo` (declared as source `name`) indexed into `data` with the
    hash embedder and no chat model: (settings, the vault's index, the source's index), closed
    on exit."""
    spec = SourceSpec(name=name, path=repo, kind="code")
    save_added(data, [spec])
    settings = Settings(vault=vault, data_dir=data, embeddings="hash", llm_model=None)
    vault_index = open_index(settings)
    try:
        make_indexer(settings, vault_index).run()
        assert [r.error for r in index_sources(settings, vault_index.provider)] == [None]
        source = open_source(settings, spec, repo.resolve(), vault_index.provider)
        try:
            yield settings, vault_index, source
        finally:
            source.close()
    finally:
        vault_index.close()
