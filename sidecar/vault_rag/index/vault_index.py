"""One vault's index, opened as a whole: manifest + vector store + lexical index + provider.

The model id is stored with the index; opening it with another model is refused until
`vault-rag index --rebuild`, so vectors of two models never mix.
"""

from __future__ import annotations

from pathlib import Path

from vault_rag.embeddings.base import EmbeddingProvider
from vault_rag.index.lexical import LexicalIndex
from vault_rag.index.manifest import Manifest
from vault_rag.index.vector_store import ChromaStore, VectorStore
from vault_rag.private_files import private_dir

MANIFEST_FILE = "manifest.sqlite3"
LEXICAL_DIR = "lexical"


class ModelMismatchError(RuntimeError):
    """The index was built with another embedding model."""


class VaultIndex:
    def __init__(
        self,
        vault_root: Path,
        data_dir: Path,
        provider: EmbeddingProvider,
        store: VectorStore | None = None,
    ) -> None:
        self.vault_root = vault_root.resolve()
        self.data_dir = data_dir
        self.provider = provider
        private_dir(data_dir)  # 0700 (files 0600): the index holds the notes' text
        self.manifest = Manifest(data_dir / MANIFEST_FILE)
        self.store: VectorStore = store if store is not None else ChromaStore(data_dir)
        self.lexical = LexicalIndex(data_dir / LEXICAL_DIR)

    @property
    def model_id(self) -> str | None:
        return self.manifest.get_meta("model_id")

    def check_model(self) -> None:
        """Refuse to mix vectors: the configured model must be the one the index was built with."""
        stored = self.model_id
        if stored is not None and stored != self.provider.model_id:
            raise ModelMismatchError(
                f"this index was built with embedding model {stored!r} but "
                f"{self.provider.model_id!r} is configured; run `vault-rag index --rebuild` "
                "to re-embed with the new model (or switch the setting back)"
            )

    def claim_model(self) -> None:
        if self.model_id is None:
            self.manifest.set_meta("model_id", self.provider.model_id)
            self.manifest.set_meta("dimension", str(self.provider.dimension))

    def clear(self) -> None:
        """Drop every stored chunk and vector (a rebuild); the vault itself is never touched."""
        self.manifest.clear()
        self.manifest.set_meta("model_id", self.provider.model_id)
        self.manifest.set_meta("dimension", str(self.provider.dimension))
        self.store.reset()
        self.lexical.clear()

    def close(self) -> None:
        self.lexical.close()
        self.manifest.close()
