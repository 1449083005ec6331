"""Tokeniser for the lexical index: Chinese notes with English / Unreal Engine terms mixed in.

The same function tokenises chunks and queries, so every choice below only has to be
consistent, not linguistically perfect. Pipeline:

1. NFKC-normalise (full-width ``ＵＥ５`` → ``UE5``) and split into CJK runs and the rest.
2. CJK runs → jieba *search-engine mode* (``cut_for_search``). Plain ``cut`` keeps
   ``数据库系统`` as one token, so a query for ``数据库`` would miss it; search mode also emits
   the dictionary sub-words (``数据``, ``数据库``, ``系统``, ``数据库系统``). That is the recall we
   want, and a query that names the whole compound still ranks the compound highest because
   it matches every piece. HMM new-word discovery stays on (names, slang like ``卡墙``).
3. Everything else → words (``\\w+``, plus a ``++``/``#`` suffix for ``c++``/``c#``, plus
   dotted numbers like ``5.3``). A word is lower-cased and, if it is an identifier made of
   several camelCase / PascalCase / snake_case / letter-digit parts, emitted whole *and* as
   its parts: ``UPrimitiveComponent`` → ``uprimitivecomponent``, ``primitivecomponent`` (the
   Unreal ``U/A/F/E/I/T/S`` type prefix dropped), ``primitive``, ``component``.
4. Drop stop words (small English + Chinese function-word lists) and single Latin letters
   (``T`` in ``SpawnActor<T>``, the ``U`` prefix part); digits are kept.
5. Light plural stemming of single words / parts: the Harman "S" stemmer plus an -es rule
   (``actors`` → ``actor``, ``bodies`` → ``body``, ``meshes`` → ``mesh``), never applied to a
   whole identifier. No other stemming: ``spawning`` stays ``spawning``.

Segmenter: rjieba (Rust port of jieba, same dictionary, same algorithm). Its output is
identical to jieba's on our test corpora (``benchmarks/lexical.py`` checks it), its
segmentation is ~7x faster (whole ``tokenize`` ~4x, the rest is our Python), its dictionary
is compiled in (~0.1 s import instead of jieba's ~1 s prefix-dict build, no
``/tmp/jieba.cache`` file, nothing printed) and it ships abi3 wheels for Windows, macOS and
Linux; it is a hard dependency, so there is no fallback. jieba itself is only loaded by
``tokenize_with(..., "jieba")``, for ``benchmarks/lexical.py``'s comparison. Neither touches
the network. The segmenter is loaded once, lazily, under a lock.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable
from typing import Literal

Backend = Literal["rjieba", "jieba"]

# Bump whenever the output of `tokenize` changes: stored token lists are then stale.
TOKENIZER_VERSION = "2"

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_SPLIT_RE = re.compile(
    rf"(?P<cjk>[{_CJK}]+)"
    r"|(?P<num>\d+(?:\.\d+)+)"  # versions / decimals stay whole: 5.3, 4.27.2
    rf"|(?P<word>[^\W{_CJK}]+(?:\+\+|#(?!\w))?)"  # c++, c#, identifiers, other scripts
)
# One identifier part: acronym before a capitalised word (HTTPServer → HTTP|Server),
# Capitalised or lower word, trailing acronym, digit run.
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Unreal type prefixes: UObject, AActor, FVector, EEnum, IInterface, TArray, SWidget.
_UE_PREFIX_RE = re.compile(r"^[UAFEITS](?=[A-Z][a-z])")

# English: articles, pronouns, auxiliaries, prepositions, question words.
_EN_STOP = """a an the and or but if then than so not no nor of to in on at by for with from as
into onto about over via per is are was were be been being am do does did done have has had it
its this that these those there here i me my we our you your he him his she her they them their
what which who whom whose when where why how can could will would shall should may might must
also just very too only"""
# Chinese function words: particles, pronouns, conjunctions, common prepositions.
_ZH_STOP = """的 地 得 了 着 过 是 在 和 与 及 或 也 就 都 而 把 被 之 其 这 那 这个 那个 这些 那些
一个 我 你 他 她 它 我们 你们 他们 它们 吗 呢 吧 啊 呀 么 什么 怎么 怎样 如何 为 为了 对 对于 从
到 由 以 所 给 等 并 且 则 即 还 又 很 这是 那是 也是 都是 就是 还是 会 能 要 该 才 想 做 让 有 没
不 太 应该 需要 可以 能够 可能 已经 或者 因为 所以 如果 但是 然后 这样 那样 这么 那么 这里 那里
哪里 哪些 哪个 自己 为什么 一下 一些 时候"""
STOP_WORDS: frozenset[str] = frozenset(_EN_STOP.split() + _ZH_STOP.split())


def _stem(word: str) -> str:
    """Harman's S-stemmer (plurals only) plus the -sses/-xes/-shes/-ches → -es rule, for ASCII
    words; keeps ``class``, ``status``, ``axis``."""
    if len(word) < 4 or not word.isascii() or not word.isalpha() or word[-1] != "s":
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "shes")) or (
        word.endswith("ches") and not word.endswith("aches")  # caches → cache
    ):
        return word[:-2]  # classes → class, boxes → box, meshes → mesh, patches → patch
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def _keep(token: str) -> bool:
    # Single Latin letters (template params, type prefixes) are noise; single digits are not.
    if len(token) == 1 and token.isascii() and not token.isdigit():
        return False
    return token not in STOP_WORDS


def _word_tokens(word: str, out: list[str]) -> None:
    pieces = [p for p in word.split("_") if p]
    parts: list[str] = []
    for piece in pieces:
        parts.extend(_CAMEL_RE.findall(piece) if piece.isascii() else [piece])
    if not parts:  # e.g. "c++" has a suffix _CAMEL_RE does not cover: keep it whole
        parts = [word]
    lowered = word.strip("_").lower()
    if len(parts) == 1 and lowered == parts[0].lower():
        token = _stem(lowered)
        if _keep(token):
            out.append(token)
        return
    emitted: list[str] = []
    if lowered not in STOP_WORDS:
        emitted.append(lowered)  # the whole identifier: exact-name queries score highest
    if len(parts) >= 2 and _UE_PREFIX_RE.match(word):
        emitted.append(word[1:].lower())  # UPrimitiveComponent ~ PrimitiveComponent
    for part in parts:
        token = _stem(part.lower())
        if _keep(token):
            emitted.append(token)
    # Deduplicate within one word so "FVector" does not count "vector" twice (BM25 tf).
    out.extend(dict.fromkeys(emitted))


def _tokenize(text: str, cut: Callable[[str], list[str]]) -> list[str]:
    out: list[str] = []
    for match in _SPLIT_RE.finditer(unicodedata.normalize("NFKC", text)):
        kind = match.lastgroup
        value = match.group()
        if kind == "cjk":
            out.extend(t for t in cut(value) if _keep(t))
        elif kind == "num":
            out.append(value)
        else:
            _word_tokens(value, out)
    return out


_lock = threading.Lock()
_cutters: dict[Backend, Callable[[str], list[str]]] = {}


def _jieba_cutter() -> Callable[[str], list[str]]:
    import jieba

    # jieba logs its dictionary build to stderr at INFO; silence it before loading.
    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer()
    tok.initialize()
    return lambda text: list(tok.cut_for_search(text))


def _rjieba_cutter() -> Callable[[str], list[str]]:
    import rjieba

    return rjieba.cut_for_search  # type: ignore[no-any-return]


def _load(backend: Backend) -> Callable[[str], list[str]]:
    with _lock:
        cutter = _cutters.get(backend)
        if cutter is None:
            cutter = _rjieba_cutter() if backend == "rjieba" else _jieba_cutter()
            _cutters[backend] = cutter
        return cutter


_default_cut: Callable[[str], list[str]] | None = None


def tokenize(text: str) -> list[str]:
    """Tokens of `text` for BM25, in text order (duplicates kept: they are term frequency)."""
    global _default_cut
    if _default_cut is None:
        _default_cut = _load("rjieba")
    return _tokenize(text, _default_cut)


def tokenize_with(text: str, backend: Backend) -> list[str]:
    """`tokenize` with an explicit segmenter, for benchmarks and equivalence tests."""
    return _tokenize(text, _load(backend))
