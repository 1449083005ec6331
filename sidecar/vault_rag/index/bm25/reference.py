"""FastBM25: the static bm25s index the lexical engine used before `bm25_postings.py`.

Kept as the reference the incremental postings are checked against (tests/test_lexical.py:
same scores, bit for bit) and for `benchmarks/lexical.py`; the product never imports it
(bm25s pulls scipy.sparse and tqdm, ~0.3 s of a cold `vault-rag search`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import bm25s
import numpy as np


@dataclass(frozen=True)
class FlatCorpus:
    """Token ids of all documents, concatenated, plus each document's length."""

    flat: np.ndarray
    lengths: np.ndarray

    @classmethod
    def from_lists(cls, docs: list[list[int]]) -> FlatCorpus:
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        flat = np.fromiter(chain.from_iterable(docs), np.int64, int(lengths.sum()))
        return cls(flat, lengths)

    def __len__(self) -> int:
        return len(self.lengths)


class FastBM25(bm25s.BM25):
    """bm25s with vectorised index construction through `build_index_from_ids`, which its docs
    invite overriding: stock bm25s loops in Python per document, this does the same arithmetic
    for its default Lucene variant with numpy. Scoring, save and load are untouched bm25s; a
    test checks scores against stock bm25s. Takes `Tokenized(FlatCorpus, vocab)` or lists."""

    def build_index_from_ids(
        self,
        unique_token_ids: list[int],
        corpus_token_ids: list[list[int]] | FlatCorpus,
        show_progress: bool = True,
        leave_progress: bool = False,
    ) -> dict[str, Any]:
        if self.method != "lucene" or self.idf_method not in (None, "lucene"):
            raise ValueError("FastBM25 implements only the Lucene BM25 variant")
        corpus = (
            corpus_token_ids
            if isinstance(corpus_token_ids, FlatCorpus)
            else FlatCorpus.from_lists(corpus_token_ids)
        )
        n_docs = len(corpus)
        # Every vocab id gets a column, even one no current chunk uses (its chunks were deleted):
        # bm25s rejects a query id past the last column.
        n_vocab = max(max(unique_token_ids, default=-1), int(corpus.flat.max(initial=-1))) + 1
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), corpus.lengths)
        # One entry per distinct (term, doc), sorted by term then doc: exactly CSC order.
        pairs, tf = np.unique(corpus.flat * n_docs + doc_of, return_counts=True)
        term, doc = np.divmod(pairs, n_docs)
        df = np.bincount(term, minlength=n_vocab)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))  # bm25s' Lucene idf, vectorised
        doc_len = corpus.lengths[doc] / corpus.lengths.mean()
        data = idf[term] * (tf / (self.k1 * ((1 - self.b) + self.b * doc_len) + tf))
        self.nonoccurrence_array = None
        return {
            "data": data.astype(self.dtype),
            "indices": doc.astype(self.int_dtype),
            "indptr": np.concatenate(([0], np.cumsum(df))),
            "num_docs": n_docs,
        }
