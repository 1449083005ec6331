"""Retrieval metrics for the eval: which result answers a question, and the arithmetic.

Judgement (ours, documented in docs/retrieval.md):
- `gold` lists alternatives: a question is answered by a result from ANY of its gold notes,
  so every crediting result stands for one virtual relevant document (`GOLD`). Recall@k is
  then "the answer is in the top k" and nDCG@10 is 1/log2(1 + rank) of the first credit.
- Note level: a result credits a gold note when its `note_path` is gold OR its `embedded_in`
  holds a gold note (the search returns embedded text once, attributed to the note that wrote
  it, and lists the notes that show it through `![[…]]`: the user sees it in those too).
  Results are deduplicated by note in rank order (all crediting results are one entry) and
  cut to k notes.
- Heading level (questions with `gold_heading`): a result must also lie in the answering
  section: the gold heading's path (`A > B`, or just `B`) appears as consecutive headings of
  the result's heading path, so a subsection of the answering section counts too. Results are
  not deduplicated (each is a passage) and are cut to k.
- Code sources (issue 27): a code file is gold as `collection:path` (the search's results from a
  source carry that key), so the note level is the file level. Symbol level (questions with
  `gold_symbol`): a passage from a gold file whose symbol names the gold symbol (`symbol_matches`),
  not deduplicated, cut to k. Questions that need every gold item (`gold_all`, a note AND a code
  file): found when each one is among the first k distinct notes/files (`all_found`).

The arithmetic is ir-measures (trec_eval through pytrec_eval). Each run's scores are strictly
decreasing by rank, so trec_eval's tie-breaking (by document id) can never re-order what the
system returned: tied system scores keep the system's own order.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import ir_measures
from ir_measures import RR, R, nDCG

GOLD = "<gold>"  # the virtual relevant document every crediting result maps to
# name shown → ir-measures measure; R@k with one relevant document is "found in the top k"
MEASURES = {
    "recall@1": R @ 1,
    "recall@5": R @ 5,
    "recall@10": R @ 10,
    "mrr@10": RR @ 10,
    "ndcg@10": nDCG @ 10,
}


@dataclass(frozen=True)
class Hit:
    """One ranked result, as much as the judgement needs."""

    note_path: str
    heading_path: str = ""
    embedded_in: tuple[str, ...] = ()
    chunk_id: str = ""
    page: int | None = None  # a PDF passage's pages
    page_end: int | None = None
    symbol: str = ""  # a code unit's symbol (`leveldb::DBImpl::Write`), "" otherwise


def credits(hit: Hit, gold: Iterable[str]) -> bool:
    """The result answers from a gold note (written there or shown there by an embed)."""
    wanted = set(gold)
    return hit.note_path in wanted or any(e in wanted for e in hit.embedded_in)


def _headings(path: str) -> list[str]:
    return [" ".join(p.strip().lstrip("#").split()).casefold() for p in path.split(">")]


def in_section(heading_path: str, gold_heading: str) -> bool:
    """The result's heading path passes through the gold heading path (consecutively)."""
    have, want = _headings(heading_path), _headings(gold_heading)
    if not heading_path.strip() or not any(want):
        return False
    return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def note_run(hits: Sequence[Hit], gold: Sequence[str], k: int) -> list[str]:
    """The note-level ranking: one key per note in rank order, crediting results as `GOLD`."""
    keys: list[str] = []
    for hit in hits:
        key = GOLD if credits(hit, gold) else hit.note_path
        if key not in keys:
            keys.append(key)
            if len(keys) == k:
                break
    return keys


def heading_run(hits: Sequence[Hit], gold: Sequence[str], gold_heading: str, k: int) -> list[str]:
    """The passage-level ranking: crediting results in the gold section count as `GOLD`."""
    keys: list[str] = []
    for i, hit in enumerate(hits[:k]):
        hit_ok = credits(hit, gold) and in_section(hit.heading_path, gold_heading)
        keys.append(GOLD if hit_ok else f"{i}:{hit.chunk_id or hit.note_path}")
    return list(dict.fromkeys(keys))


def page_run(hits: Sequence[Hit], gold: Sequence[str], gold_page: int, k: int) -> list[str]:
    """The passage-level ranking of a PDF answer: results from the gold file whose pages
    include the gold page count as `GOLD`."""
    keys: list[str] = []
    for i, hit in enumerate(hits[:k]):
        first, last = hit.page, hit.page_end or hit.page
        on_page = first is not None and last is not None and first <= gold_page <= last
        keys.append(GOLD if on_page and credits(hit, gold) else f"{i}:{hit.chunk_id}")
    return list(dict.fromkeys(keys))


def _symbol_parts(name: str) -> list[str]:
    """`leveldb::SkipList<Key, Comparator>::Insert` → [leveldb, SkipList, Insert]: template
    arguments and anonymous namespaces dropped, compared case-sensitively (C++ is)."""
    depth, kept = 0, []
    for char in name:
        depth += char == "<"
        if depth == 0:
            kept.append(char)
        depth -= char == ">" and depth > 0
    parts = [p.strip() for p in "".join(kept).split("::")]
    return [p for p in parts if p and p != "(anonymous)"]


def symbol_matches(symbol: str, gold_symbol: str) -> bool:
    """The unit's symbol is the gold one: its last names are the gold's (`DBImpl::Write`
    matches `leveldb::DBImpl::Write`, not `leveldb::DBImpl::WriteLevel0Table`), so gold can
    leave out namespaces."""
    have, want = _symbol_parts(symbol), _symbol_parts(gold_symbol)
    if not want or len(have) < len(want):
        return False
    return have[len(have) - len(want) :] == want


def symbol_run(
    hits: Sequence[Hit], gold: Sequence[str], symbols: Sequence[str], k: int
) -> list[str]:
    """The passage-level ranking of a code answer: results from a gold file whose symbol is one
    of the gold `symbols` count as `GOLD`."""
    keys: list[str] = []
    for i, hit in enumerate(hits[:k]):
        hit_ok = credits(hit, gold) and any(symbol_matches(hit.symbol, s) for s in symbols)
        keys.append(GOLD if hit_ok else f"{i}:{hit.chunk_id or hit.note_path}")
    return list(dict.fromkeys(keys))


def all_found(hits: Sequence[Hit], gold: Sequence[str], k: int) -> bool:
    """Every gold item (a note and a code file, say) is among the first k distinct notes/files."""
    seen: list[str] = []
    found: set[str] = set()
    for hit in hits:
        if hit.note_path not in seen:
            seen.append(hit.note_path)
            if len(seen) > k:
                break
        found.update(g for g in gold if credits(hit, [g]))
    return found >= set(gold)


def first_rank(keys: Sequence[str]) -> int | None:
    """1-based rank of the first credit, None when it is not in the list."""
    return keys.index(GOLD) + 1 if GOLD in keys else None


def score(runs: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """Per question id: every measure in `MEASURES` for its ranked keys. Questions whose list is
    empty score 0 (trec_eval would leave them out, inflating the mean)."""
    qrels = {qid: {GOLD: 1} for qid in runs}
    run = {
        qid: {key: float(len(keys) - i) for i, key in enumerate(keys)}
        for qid, keys in runs.items()
        if keys
    }
    names = {measure: name for name, measure in MEASURES.items()}
    values = {qid: dict.fromkeys(MEASURES, 0.0) for qid in runs}
    if run:
        for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, run):
            values[metric.query_id][names[metric.measure]] = float(metric.value)
    return values


def mean(values: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each measure over questions (an empty set gives no numbers)."""
    rows = list(values)
    if not rows:
        return {}
    return {name: statistics.fmean(row[name] for row in rows) for name in MEASURES}
