"""Routing across collections (issue 43): how much each collection searched together should
contribute to one merged list, decided per question from evidence we already have.

With a code source beside the vault, taking the lists rank by rank left a code question two or
three places in the top five, so its file had to be first or second in the code list. Routing
gives each collection a weight and merges by weighted rank: a collection of weight w places its
result of rank r at (r + 1) / w, so with weights 1 and 2 the heavier list fills two places for
each one of the other (a D'Hondt-style share of the slots; ties go to the heavier list, then to
the collections' order). Equal weights are exactly the rank-by-rank merge, the vault first.

A source starts at weight 1; each piece of evidence against the vault multiplies it (at most
`MAX_WEIGHT`):
- ×3, **calibrated scores** (`collection_null.py`, `calibration.LEXICAL`): its best BM25 ÷
  ln(passages) is evidence and ahead of the vault's; its best dense key is ahead of the vault's
  and significant; the vault has little on the question while the source has evidence of its
  own and is ahead on one side; the question's words are the source's alone (its index knows
  two of them, or half, that the vault's does not, and the vault's knows none the source's
  lacks), unless the question asks for the notes;
- ×2, **the question**: each of up to two identifiers (`DBImpl::Write`, `slide_hash`,
  `crc32.c`) found among a code collection's symbols and file names; code words ("source
  code", "implemented", "源码") when the source has some evidence, program words ("function",
  "逻辑") only when it is ahead on a score (a UE note question that says "function" must not
  be sent to a zlib tree), and so are how-it-works words ("where is", "是怎么").
The vault's weight is 2 when the question asks for the user's notes ("my note", "笔记里") and
not for the code too. Nothing is ever dropped, only placed lower, so a wrong route costs ranks,
never the answer. `docs/retrieval.md` ("Routing across collections") has the measurements.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vault_rag.retrieval.calibration import LEXICAL
from vault_rag.retrieval.results import SearchResult

FACTOR = 2.0  # one piece of evidence for a source doubles its weight
STRONG_FACTOR = 3.0  # ... or triples it, when it is calibrated evidence against the vault's
MAX_WEIGHT = 8.0  # three pieces of evidence: the vault's best is placed ninth
NOTE_FACTOR = 2.0  # the vault's weight when the question asks for the user's notes
SOME_LEXICAL = 0.5  # BM25 ÷ ln(passages) at or above which a source has something on it
ONLY_WORDS = 2  # question words only a source knows that are evidence (or half of them)

# Words that say the answer is in code, en + zh (matched case-insensitively).
CODE_WORDS = re.compile(
    r"\b(?:code|source|implemented|implementation|implements|which file|defined|definition)\b"
    r"|代码|源码|实现|哪个文件|定义在",
    re.IGNORECASE,
)
# Words of code that notes use as much (a UE note on "my C++ functions"): they count only
# when the source is ahead of the vault on some calibrated score.
PROGRAM_WORDS = re.compile(
    r"\b(?:functions?|methods?|struct|macro|class)\b|函数|方法|逻辑|结构体|宏", re.IGNORECASE
)
# Words that say the answer is in the user's own notes.
NOTE_WORDS = re.compile(
    r"\b(?:my notes?|our notes?|the notes?|I (?:wrote|noted|jotted|recorded)|did I (?:write|note)|"
    r"what did I|I've written)\b"
    r"|笔记|记过|记在|记的|写过|我写的|我记",
    re.IGNORECASE,
)
# Words that ask how a thing works inside (where it is done, how it is computed): code, when
# the code is ahead of the vault on some calibrated score (UE notes ask "是怎么划分的" too).
MECHANISM_WORDS = re.compile(
    r"\b(?:where (?:is|are|does|do)|how (?:is|are|does)|which function|what happens)\b"
    r"|在哪(?!个)|怎么实现|是怎么|哪一步",
    re.IGNORECASE,
)
# Code-shaped tokens: scope (`A::b`), snake_case, camelCase inside a word, letters with digits,
# a file name with an extension. A plain word ("compress", "Write") is not an identifier here:
# English words name symbols too often.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)*")
_CODE_SHAPE = re.compile(r"::|_|[a-z][A-Z]|[A-Z]{2,}[a-z]|[A-Za-z]\d|\.[a-z]{1,4}$")
# The tokens (`index/bm25/tokenize.py`) compared between vocabularies: Latin-script words. Code
# and its comments are written in them; the Chinese words of a question only say that the
# vault is Chinese, not which collection the question is about.
VOCABULARY_WORD = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class CollectionRoute:
    """One collection's share of a merged search and why."""

    name: str
    weight: float
    reasons: tuple[str, ...] = ()
    dense_key: float | None = None  # best cosine, chance-corrected (collection_null.top_key)
    lexical_key: float | None = None  # best BM25 ÷ ln(passages)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "weight": self.weight,
            "reasons": list(self.reasons),
            "dense_key": None if self.dense_key is None else round(self.dense_key, 3),
            "lexical_key": None if self.lexical_key is None else round(self.lexical_key, 3),
        }


@dataclass(frozen=True)
class Routing:
    """The decision for one question over several collections, in their order."""

    collections: tuple[CollectionRoute, ...] = field(default_factory=tuple)

    @property
    def searched(self) -> list[str]:
        return [c.name for c in self.collections]

    def weights(self) -> dict[str, float]:
        return {c.name: c.weight for c in self.collections}

    def line(self) -> str:
        return routing_line(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {"searched": self.searched, "collections": [c.to_dict() for c in self.collections]}


def routing_line(routing: Mapping[str, Any]) -> str:
    """A decision (`Routing.to_dict`, or `/v1/search`'s `routing`) in one line:
    `searched: vault ×1, leveldb ×3 (identifier DBImpl::Write; code words)`."""
    parts = []
    for c in routing.get("collections", []):
        why = f" ({'; '.join(c['reasons'])})" if c.get("reasons") else ""
        parts.append(f"{c['name']} ×{c['weight']:g}{why}")
    return "searched: " + ", ".join(parts)


def identifiers(question: str) -> list[str]:
    """The question's code-shaped tokens, in order, once each."""
    found = [t.strip(".") for t in IDENTIFIER.findall(question)]
    return list(dict.fromkeys(t for t in found if len(t) >= 3 and _CODE_SHAPE.search(t)))


def known_identifiers(tokens: Iterable[str], names: frozenset[str]) -> list[str]:
    """The tokens a collection knows: a symbol's name or a qualified tail of it, or a file name."""
    known = []
    for token in tokens:
        parts = token.split("::")
        if token in names or parts[-1] in names or token.lower() in names:
            known.append(token)
    return known


def vocabulary_words(tokens: Iterable[str]) -> list[str]:
    """The question's tokens whose presence in each index's vocabulary routing compares."""
    return list(dict.fromkeys(t for t in tokens if VOCABULARY_WORD.fullmatch(t)))


def decide(
    question: str,
    order: list[str],
    dense: Mapping[str, float],
    significant: Mapping[str, bool],
    lexical: Mapping[str, float],
    code_names: Mapping[str, frozenset[str]],
    words: Mapping[str, frozenset[str]] | None = None,
) -> Routing:
    """The weights for `order` (the vault first: the others are weighed against it).
    `dense`/`lexical`: each collection's calibrated best scores where it has them;
    `significant`: whether its dense key is beyond chance; `code_names`: the symbol and file
    names of each code collection (absent: not code); `words`: the question's
    `vocabulary_words` each collection's index knows (absent: not compared, as for a vault
    too small for its vocabulary to mean anything)."""
    first, *others = order
    words = words or {}
    vault = _Evidence.of(first, dense, significant, lexical, words)
    # Asking for the notes raises the vault, and then the words the notes lack say nothing;
    # asking for the note and the code ("my note on X, and the code that does it") leaves the
    # vault's weight be: its best note comes early either way.
    asks_notes = bool(NOTE_WORDS.search(question))
    notes = asks_notes and not CODE_WORDS.search(question)
    routes = [
        CollectionRoute(
            first,
            NOTE_FACTOR if notes else 1.0,
            ("note words",) if notes else (),
            vault.dense,
            vault.lexical,
        )
    ]
    for name in others:
        own = _Evidence.of(name, dense, significant, lexical, words)
        evidence = _evidence(question, own, vault, code_names.get(name), asks_notes)
        weight = min(math.prod(factor for factor, _ in evidence), MAX_WEIGHT)
        reasons = tuple(reason for _, reason in evidence)
        routes.append(CollectionRoute(name, weight, reasons, own.dense, own.lexical))
    return Routing(tuple(routes))


@dataclass(frozen=True)
class _Evidence:
    dense: float | None
    significant: bool
    lexical: float | None
    words: frozenset[str] | None  # the question's vocabulary words its index knows

    @classmethod
    def of(
        cls,
        name: str,
        dense: Mapping[str, float],
        significant: Mapping[str, bool],
        lexical: Mapping[str, float],
        words: Mapping[str, frozenset[str]],
    ) -> _Evidence:
        return cls(
            dense.get(name), significant.get(name, False), lexical.get(name), words.get(name)
        )

    def beats(self, other: _Evidence) -> tuple[bool, bool]:
        """(dense, lexical): ahead of `other` on that side."""
        return (
            self.dense is not None
            and self.dense > (other.dense if other.dense is not None else -math.inf),
            self.lexical is not None and self.lexical > (other.lexical or 0.0),
        )


def _evidence(
    question: str,
    own: _Evidence,
    vault: _Evidence,
    names: frozenset[str] | None,
    asks_notes: bool = False,
) -> list[tuple[float, str]]:
    """Each piece of evidence for a source against the vault (module doc): its factor, why."""
    found: list[tuple[float, str]] = []
    dense_ahead, lexical_ahead = own.beats(vault)
    if lexical_ahead and (own.lexical or 0.0) >= LEXICAL.weak:
        found.append((STRONG_FACTOR, f"keywords beat the vault's ({own.lexical:.2f})"))
    if dense_ahead and own.significant:
        found.append((STRONG_FACTOR, f"meaning beats the vault's ({own.dense:.2f} sd)"))
    # (a vault too small to calibrate is not weak, only unknown; when neither has evidence of
    # its own, neither is raised)
    calibrated = vault.dense is not None and vault.lexical is not None
    vault_weak = calibrated and not vault.significant and (vault.lexical or 0.0) < LEXICAL.weak
    own_evidence = own.significant or (own.lexical or 0.0) >= LEXICAL.weak
    if vault_weak and own_evidence and (dense_ahead or lexical_ahead):
        found.append((STRONG_FACTOR, "the vault has little on it"))
    if own.words is not None and vault.words is not None and not asks_notes:
        only = sorted(own.words - vault.words)
        # one such word among many the vault knows too is chance ("branch" in a Bases question
        # beside zlib): two, or half of the words either knows
        enough = len(only) >= ONLY_WORDS or 2 * len(only) >= len(own.words | vault.words)
        if only and enough and not vault.words - own.words:
            found.append((STRONG_FACTOR, f"words only it has: {', '.join(only[:3])}"))
    if names is None:
        return found
    known = known_identifiers(identifiers(question), names)
    found += [(FACTOR, f"identifier {token}") for token in known[:2]]
    # words alone do not route: a UE note question saying "function" beside a zlib tree
    ahead = bool(found) or dense_ahead or lexical_ahead
    some = ahead or (own.dense or -1.0) > 0 or (own.lexical or 0.0) >= SOME_LEXICAL
    if (some and CODE_WORDS.search(question)) or (ahead and PROGRAM_WORDS.search(question)):
        found.append((FACTOR, "code words"))
    if ahead and MECHANISM_WORDS.search(question):  # notes say "how does X work" as often
        found.append((FACTOR, "asks how it works"))
    return found


def merge_weighted(
    lists: Mapping[str, list[SearchResult]], weights: Mapping[str, float], k: int
) -> list[SearchResult]:
    """The `k` best of the lists by weighted rank (module doc), each list in its own order and
    each result naming its collection."""
    ranked = []
    for order, (name, results) in enumerate(lists.items()):
        weight = weights.get(name, 1.0)
        for rank, result in enumerate(results):
            ranked.append(((rank + 1) / weight, -weight, order, rank, name, result))
    ranked.sort(key=lambda item: item[:4])
    return [replace(result, collection=name) for *_, name, result in ranked[:k]]
