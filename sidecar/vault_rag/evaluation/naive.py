"""The naive baseline: the pipeline every LangChain RAG tutorial builds, on the same model.

Each note's raw markdown (no embed resolution, frontmatter left in) →
`MarkdownHeaderTextSplitter` on h1–h3 → `RecursiveCharacterTextSplitter(1000, 100)` →
langchain-chroma `Chroma` (in memory) with our embedding provider behind a LangChain
`Embeddings`; dense-only, plus a "naive hybrid": that dense list and a bm25s list over
rjieba tokens fused with reciprocal rank fusion, k = 60 (the textbook constant).

Vectors are cached by text hash in SQLite under the data dir, so re-runs cost no model calls.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import bm25s
import chromadb
import numpy as np
import rjieba
from chromadb.config import Settings as ChromaSettings
from langchain_chroma import Chroma
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

from vault_rag.embeddings.adapter import as_langchain
from vault_rag.embeddings.base import EmbeddingProvider, batched
from vault_rag.evaluation.metrics import Hit
from vault_rag.vault.listing import iter_note_paths
from vault_rag.vault.reader import DEFAULT_IGNORES

HEADERS = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
CHUNK_SIZE, CHUNK_OVERLAP = 1000, 100
RRF_K = 60
DEPTH = 50  # candidates per list before fusion
CACHE_FILE = "naive_vectors.sqlite3"
_WORD = re.compile(r"\w")
_BATCH = 64  # texts per model call and per cache commit


class CachedEmbeddings(Embeddings):
    """A LangChain `Embeddings` that remembers every vector in SQLite, keyed by model id, kind
    (query or passage: e5 embeds them differently) and the text's hash."""

    def __init__(self, provider: EmbeddingProvider, path: Path) -> None:
        self.inner = as_langchain(provider)
        self.model_id = provider.model_id
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")
        self.computed = 0  # texts sent to the model (cache misses)
        self.reused = 0

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{self.model_id}\0{kind}\0{text}".encode()).hexdigest()

    def _cached(self, kind: str, texts: Sequence[str], embed: object) -> list[list[float]]:
        keys = [self._key(kind, t) for t in texts]
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                f"SELECT key, v FROM vectors WHERE key IN ({marks})", part
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32).tolist()
        missing = (t for t, key in zip(texts, keys, strict=True) if key not in found)
        todo = list(dict.fromkeys(missing))
        # Saved batch by batch: an interrupted first run keeps what it computed.
        for batch in batched(todo, _BATCH):
            vectors = embed(list(batch))  # type: ignore[operator]
            rows = [
                (self._key(kind, t), np.asarray(v, dtype=np.float32).tobytes())
                for t, v in zip(batch, vectors, strict=True)
            ]
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            found.update((self._key(kind, t), list(v)) for t, v in zip(batch, vectors, strict=True))
        self.computed += len(todo)
        self.reused += len(texts) - len(todo)
        return [found[key] for key in keys]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._cached("passage", texts, self.inner.embed_documents)

    def embed_query(self, text: str) -> list[float]:
        return self._cached("query", [text], lambda ts: [self.inner.embed_query(ts[0])])[0]

    def close(self) -> None:
        self._db.close()


def naive_tokens(text: str) -> list[str]:
    """jieba-style tokens as a tutorial would make them: rjieba's cut, lower-cased, words only."""
    return [t.lower() for t in rjieba.cut(text) if _WORD.search(t)]


def note_files(vault: Path, ignore: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(vault-relative path, raw text) of the notes the index sees, read as a loader reads them."""
    for rel in iter_note_paths(vault, ignore):
        yield rel, (vault / rel).read_text(encoding="utf-8", errors="replace")


def split_note(note_path: str, text: str) -> list[Document]:
    """The tutorial's two splitters; each chunk remembers its note and h1–h3 headings."""
    sections = MarkdownHeaderTextSplitter(headers_to_split_on=HEADERS).split_text(text)
    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    chunks = splitter.split_documents(sections)
    for chunk in chunks:
        chunk.metadata["source"] = note_path
    return [c for c in chunks if c.page_content.strip()]


def heading_path(metadata: dict[str, object]) -> str:
    return " > ".join(str(metadata[name]) for _, name in HEADERS if metadata.get(name))


class NaivePipeline:
    """Built once per run over the whole vault: an in-memory Chroma and a bm25s index."""

    def __init__(
        self,
        vault: Path,
        provider: EmbeddingProvider,
        cache_dir: Path,
        ignore: Iterable[str] = DEFAULT_IGNORES,
    ) -> None:
        self.embeddings = CachedEmbeddings(provider, cache_dir / CACHE_FILE)
        self.chunks: list[Document] = []
        for note_path, text in note_files(vault, ignore):
            self.chunks.extend(split_note(note_path, text))
        self.ids = [str(i) for i in range(len(self.chunks))]
        # A fresh collection in an in-memory client: nothing is written next to the index.
        client = chromadb.EphemeralClient(settings=ChromaSettings(anonymized_telemetry=False))
        self.store = Chroma(
            collection_name=f"naive-{uuid.uuid4().hex[:12]}",
            embedding_function=self.embeddings,
            client=client,
        )
        if self.chunks:
            self.store.add_documents(self.chunks, ids=self.ids)
        self.bm25 = bm25s.BM25()
        self.bm25.index([naive_tokens(c.page_content) for c in self.chunks], show_progress=False)

    def hit(self, position: int) -> Hit:
        chunk = self.chunks[position]
        return Hit(chunk.metadata["source"], heading_path(chunk.metadata), (), self.ids[position])

    def dense(self, question: str, depth: int = DEPTH) -> list[int]:
        found = self.store.similarity_search_with_score(question, k=min(depth, len(self.chunks)))
        return [int(doc.id) for doc, _ in found if doc.id is not None]

    def lexical(self, question: str, depth: int = DEPTH) -> list[int]:
        tokens = naive_tokens(question)
        if not tokens or not self.chunks:
            return []
        # Tokens the corpus never saw are dropped (bm25s would refuse them).
        known = [t for t in tokens if t in self.bm25.vocab_dict]
        if not known:
            return []
        docs, scores = self.bm25.retrieve(
            [known], k=min(depth, len(self.chunks)), show_progress=False
        )
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def hybrid(self, question: str, depth: int = DEPTH) -> list[int]:
        fused: dict[int, float] = defaultdict(float)
        for ranking in (self.dense(question, depth), self.lexical(question, depth)):
            for rank, position in enumerate(ranking):
                fused[position] += 1.0 / (RRF_K + rank + 1)
        return sorted(fused, key=lambda p: (-fused[p], p))

    def close(self) -> None:
        self.embeddings.close()


class NaiveSystem:
    """One of the naive pipeline's lists (`dense`, `lexical` or `hybrid`) as an eval system."""

    def __init__(self, pipeline: NaivePipeline, mode: str, depth: int) -> None:
        self.pipeline, self.mode, self.depth = pipeline, mode, max(depth, DEPTH)
        self.name = f"naive-{mode}"

    def search(self, question: str) -> list[Hit]:
        ranking = getattr(self.pipeline, self.mode)(question, self.depth)
        return [self.pipeline.hit(p) for p in ranking]
