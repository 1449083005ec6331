"""In-memory BM25 postings that take one document at a time: the search side of `lexical.py`.

bm25s (the engine before this one) is a static index: its matrix holds final scores, which
depend on every document (idf, average length), so any write meant rebuilding the matrix of
every chunk — about a second per edit at the ~50k chunks of a 10,000-note vault. Here the
postings hold term frequencies and the scores are computed at query time, so a write touches
only the documents it changes.

Scores are bm25s' default Lucene BM25 (k1 1.5, b 0.75, idf = ln(1 + (N − df + ½) / (df + ½)),
N and the average length over every document), with FastBM25's arithmetic: float64 per
(term, document), rounded to float32, then summed in float32 in query-term order, as bm25s
sums its matrix columns. The scores are therefore the same numbers, bit for bit;
tests/test_lexical.py checks them against FastBM25 and stock bm25s.

Layout, one immutable `Postings` per state:
* a CSC *base*: per term id, the slots (documents) holding it and their term frequencies;
* a *delta* of (term, slot, tf) triples appended by documents added since the base was built;
* per slot its length and whether it is alive: removing a document only marks its slot dead.
`with_changes` returns the next state; `compacted` folds the delta into a new base and drops
dead slots. Readers hold whichever state they took, with no lock: a new state shares the base
and the append-only buffers with the old one and copies only the per-slot arrays.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

K1 = 1.5  # bm25s' defaults (its Lucene variant), as FastBM25 used them
B = 0.75
DELTA_SHARE = 0.125  # fold the delta into the base past this share of the base's entries...
DELTA_MIN = 65_536  # ...but not before it holds this many (small indexes fold rarely)
DEAD_SHARE = 0.25  # compact once this share of the slots is dead

Row = tuple[str | None, str]  # (note path, newline-joined normalised tags) of a slot


def tokens_of(blob: bytes) -> np.ndarray:
    """A document's token ids as stored by `lexical.py` (little-endian int32)."""
    return np.frombuffer(blob, dtype="<i4")


class _Lineage:
    """What the states derived from one build share: append-only buffers (a state reads only
    the prefix it was made with) and the writer-side map from chunk id to live slot."""

    def __init__(self, ids: list[str], rows: list[Row]) -> None:
        self.ids = ids
        self.rows = rows
        self._slot_of: dict[str, int] | None = None
        self.terms = np.empty(0, dtype=np.int32)  # delta buffers, grown by doubling
        self.slots = np.empty(0, dtype=np.int32)
        self.tfs = np.empty(0, dtype=np.int32)
        self.size = 0
        self.head: Postings | None = None  # the only state that may be extended
        self.masks: dict[tuple[str, str], np.ndarray] = {}  # filter masks, grown with slots
        self.mask_lock = threading.Lock()

    @property
    def slot_of(self) -> dict[str, int]:
        """Chunk id → live slot; built on the first change (a search alone never needs it)."""
        if self._slot_of is None:
            self._slot_of = {chunk_id: slot for slot, chunk_id in enumerate(self.ids)}
        return self._slot_of

    def append(self, terms: np.ndarray, slots: np.ndarray, tfs: np.ndarray) -> None:
        need = self.size + terms.size
        if need > self.terms.size:
            cap = max(need, 2 * self.terms.size, 1024)
            for name in ("terms", "slots", "tfs"):
                grown = np.empty(cap, dtype=np.int32)
                grown[: self.size] = getattr(self, name)[: self.size]
                setattr(self, name, grown)
        self.terms[self.size : need] = terms
        self.slots[self.size : need] = slots
        self.tfs[self.size : need] = tfs
        self.size = need


@dataclass(frozen=True, eq=False)
class Postings:
    indptr: np.ndarray  # int64, base terms + 1
    base_slots: np.ndarray  # int32, CSC order (by term, then slot)
    base_tfs: np.ndarray  # int32
    delta: int  # delta triples this state sees (a prefix of the lineage's buffers)
    lengths: np.ndarray  # int64 per slot: tokens of the document
    alive: np.ndarray  # bool per slot
    n_alive: int
    total_len: int  # tokens of the live documents
    lineage: _Lineage = field(repr=False)

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def build(cls, ids: list[str], rows: list[Row], docs: Sequence[np.ndarray]) -> Postings:
        """All documents at once (vectorised: no Python work per token)."""
        n, width = len(ids), max(len(ids), 1)
        lengths = np.fromiter((d.size for d in docs), dtype=np.int64, count=n)
        # One key per token, term * width + doc, sorted in place; a run of equal keys is one
        # (term, doc) pair and its length the term frequency: CSC order (by term, then doc).
        # (np.unique did the same with four more copies of the keys: ~170 MB more at the 7M
        # tokens of a 10k-note vault, in the sidecar's peak memory.)
        keys = np.concatenate(docs).astype(np.int64) if n else np.empty(0, dtype=np.int64)
        keys *= width
        keys += np.repeat(np.arange(n, dtype=np.int64), lengths)
        keys.sort()
        first = np.ones(keys.size, dtype=bool)
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        del first
        tf = np.diff(np.append(starts, keys.size))
        pairs = keys[starts]
        del keys, starts
        term, doc = np.divmod(pairs, width)
        n_terms = int(term.max(initial=-1)) + 1
        indptr = np.concatenate(([0], np.cumsum(np.bincount(term, minlength=n_terms))))
        return cls.from_arrays(
            ids, rows, indptr, doc.astype(np.int32), tf.astype(np.int32), lengths
        )

    @classmethod
    def from_arrays(
        cls,
        ids: list[str],
        rows: list[Row],
        indptr: np.ndarray,
        slots: np.ndarray,
        tfs: np.ndarray,
        lengths: np.ndarray,
    ) -> Postings:
        """A state from a CSC base of all-live documents (a build or a saved snapshot)."""
        lineage = _Lineage(ids, rows)
        lengths = np.asarray(lengths, dtype=np.int64)
        state = cls(
            np.asarray(indptr, dtype=np.int64),
            np.asarray(slots, dtype=np.int32),
            np.asarray(tfs, dtype=np.int32),
            0,
            lengths,
            np.ones(len(ids), dtype=bool),
            len(ids),
            int(lengths.sum()),
            lineage,
        )
        lineage.head = state
        return state

    @property
    def n_slots(self) -> int:
        return self.lengths.size

    @property
    def ids(self) -> list[str]:
        """Chunk id per slot (read only the first `n_slots`; dead slots keep their id)."""
        return self.lineage.ids

    @property
    def rows(self) -> list[Row]:
        return self.lineage.rows

    def live_ids(self) -> list[str]:
        return [self.ids[s] for s in np.flatnonzero(self.alive)]

    # -- changes ----------------------------------------------------------------------------
    def with_changes(
        self, removed: Iterable[str], added: Sequence[tuple[str, Row, np.ndarray]]
    ) -> Postings:
        """The next state: `removed` ids dropped (unknown ones ignored), then `added`
        (id, row, token ids) inserted, each replacing any live document with its id."""
        lineage = self.lineage
        if lineage.head is not self:
            raise RuntimeError("only the newest state of an index can be changed")
        added = list({chunk_id: (chunk_id, row, t) for chunk_id, row, t in added}.values())
        alive = self.alive.copy()
        n_alive, total = self.n_alive, self.total_len
        gone = [s for s in (lineage.slot_of.pop(i, None) for i in removed) if s is not None]
        for chunk_id, _, _ in added:
            slot = lineage.slot_of.pop(chunk_id, None)
            if slot is not None:
                gone.append(slot)
        if gone:
            dead = np.asarray(gone, dtype=np.int64)
            alive[dead] = False
            n_alive -= dead.size
            total -= int(self.lengths[dead].sum())
        first = self.n_slots
        new_lengths = np.empty(len(added), dtype=np.int64)
        for k, (chunk_id, row, tokens) in enumerate(added):
            slot = first + k
            lineage.ids.append(chunk_id)
            lineage.rows.append(row)
            lineage.slot_of[chunk_id] = slot
            new_lengths[k] = tokens.size
            if tokens.size:
                terms, counts = np.unique(tokens, return_counts=True)
                lineage.append(terms, np.full(terms.size, slot, dtype=np.int32), counts)
        alive = np.concatenate((alive, np.ones(len(added), dtype=bool)))
        state = Postings(
            self.indptr,
            self.base_slots,
            self.base_tfs,
            lineage.size,
            np.concatenate((self.lengths, new_lengths)),
            alive,
            n_alive + len(added),
            total + int(new_lengths.sum()),
            lineage,
        )
        lineage.head = state
        return state

    def needs_compaction(self) -> bool:
        dead = self.n_slots - self.n_alive
        return self.delta > max(
            DELTA_MIN, DELTA_SHARE * self.base_slots.size
        ) or dead > DEAD_SHARE * max(self.n_slots, 1)

    def compacted(self) -> Postings:
        """The same documents as one CSC base without dead slots (a new lineage: the slots
        are renumbered in their current order). O(entries), no sort of the base."""
        terms, slots, tfs = self._entries()
        keep = self.alive[slots]
        terms, slots, tfs = terms[keep], slots[keep], tfs[keep]
        renumber = np.cumsum(self.alive, dtype=np.int64) - 1
        live = np.flatnonzero(self.alive)
        n_terms = int(terms.max(initial=-1)) + 1
        indptr = np.concatenate(([0], np.cumsum(np.bincount(terms, minlength=n_terms))))
        return Postings.from_arrays(
            [self.ids[s] for s in live],
            [self.rows[s] for s in live],
            indptr,
            renumber[slots].astype(np.int32),
            tfs,
            self.lengths[live],
        )

    def _entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (term, slot, tf) of base and delta, in CSC order: the delta's slots are all
        newer than the base's, so a stable sort by term keeps slots ascending in each term."""
        base_terms = np.repeat(
            np.arange(self.indptr.size - 1, dtype=np.int32), np.diff(self.indptr)
        )
        d = self.delta
        lin = self.lineage
        terms = np.concatenate((base_terms, lin.terms[:d]))
        slots = np.concatenate((self.base_slots, lin.slots[:d]))
        tfs = np.concatenate((self.base_tfs, lin.tfs[:d]))
        if d:
            order = np.argsort(terms, kind="stable")
            terms, slots, tfs = terms[order], slots[order], tfs[order]
        return terms, slots, tfs

    # -- scoring ----------------------------------------------------------------------------
    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """Live (slots, term frequencies) of one term id."""
        if term + 1 < self.indptr.size:
            lo, hi = self.indptr[term], self.indptr[term + 1]
            slots, tfs = self.base_slots[lo:hi], self.base_tfs[lo:hi]
        else:
            slots = tfs = np.empty(0, dtype=np.int32)
        if self.delta:
            lin = self.lineage
            found = np.flatnonzero(lin.terms[: self.delta] == term)
            if found.size:
                slots = np.concatenate((slots, lin.slots[found]))
                tfs = np.concatenate((tfs, lin.tfs[found]))
        keep = self.alive[slots]
        return slots[keep], tfs[keep]

    def scores(self, terms: Sequence[int]) -> np.ndarray:
        """BM25 score of every slot (float32; 0 for dead slots and non-matching documents)."""
        out = np.zeros(self.n_slots, dtype=np.float32)
        if not self.n_alive:
            return out
        n_docs = self.n_alive
        mean_len = self.total_len / n_docs  # = np.mean of the live lengths (exact int sum)
        for term in terms:
            slots, tf = self.postings(term)
            df = np.array([slots.size], dtype=np.int64)
            if not df[0]:
                continue
            # FastBM25's expressions, in its order and types, so every float is the same.
            idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
            doc_len = self.lengths[slots] / mean_len
            data = idf[0] * (tf / (K1 * ((1 - B) + B * doc_len) + tf))
            out[slots] += data.astype(np.float32)
        return out

    # -- filters ----------------------------------------------------------------------------
    def mask(self, key: tuple[str, str], keep: Callable[[Row], bool]) -> np.ndarray:
        """Boolean mask over this state's slots for one (folder, tag) filter, `keep(row)`
        deciding each slot; cached for the lineage and extended as slots are added."""
        lin = self.lineage
        with lin.mask_lock:
            cached = lin.masks.get(key, np.empty(0, dtype=bool))
            if cached.size < self.n_slots:
                extra = np.fromiter(
                    (keep(r) for r in lin.rows[cached.size : self.n_slots]),
                    dtype=bool,
                    count=self.n_slots - cached.size,
                )
                cached = np.concatenate((cached, extra))
                if len(lin.masks) < 32 or key in lin.masks:
                    lin.masks[key] = cached
        return cached[: self.n_slots]
