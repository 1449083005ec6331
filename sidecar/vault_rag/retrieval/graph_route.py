"""The graph route, its pure half: which relational question is asked (`graph_ask`), and how
the units the code graph relates join the searched list (`fuse_route`).

A question such as "what derives from `Comparator`", "who calls DBImpl::Get", "which files
include db/db_impl.h", "X 的子类", "谁调用了 X" or "which notes talk about X" names a relation
and a symbol (or a file). `graph_ask` returns the relation and the names the question writes,
most specific first; whether a name is a known symbol is decided against the symbol table by
the caller (`source_indexes/graph_route.py`), so an ordinary word never triggers the route.

The route's hits are one more ranked list, fused with the searched list by reciprocal rank
(the same RRF the hybrid search uses between dense and BM25): a unit both lists found rises,
a unit only the graph found enters by its rank there. No hit: the searched list, unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from vault_rag.retrieval.results import SearchResult

GraphRoute = Callable[[str], list[SearchResult]]  # question → the related units, best first

FILE_ASKS = frozenset({"includes", "included_by"})  # these name a file, not a symbol

# (relation, pattern); the first that matches wins, so the narrower forms come first
# ("what does X derive from" asks for bases, "what derives from X" for derived classes).
_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (relation, re.compile(pattern, re.IGNORECASE))
    for relation, pattern in (
        ("bases", r"\bwhat does .+ (derive|inherit)s? from\b"),
        ("bases", r"\b(base|parent|super) ?class(es)? of\b|\bbases of\b|\bsuperclass(es)?\b"),
        ("bases", r"的(基类|父类)|继承自(什么|哪)"),
        ("derived", r"\b(derives?|inherits?|inheriting|deriving) from\b"),
        ("derived", r"\b(sub ?class(es)?|derived (class(es)?|types?)) of\b|\bsubclass(es)?\b"),
        ("derived", r"\b(subclasses|overrides|extends)\b"),
        ("derived", r"子类|派生|继承了?"),
        ("callees", r"\b(what|which)\b.* does .+ call\b|\bcallees of\b"),
        ("callees", r"调用了(什么|哪些)"),
        ("callers", r"\b(who|what|which \w+) (calls|invokes|uses)\b|\bcallers? of\b"),
        ("callers", r"\bcalled (by|from)\b|\bwhere is .+ called\b"),
        ("callers", r"谁调用|调用了?\S*的|调用者"),
        ("includes", r"\b(what|which)\b.* does .+ include\b|\bincludes of\b"),
        ("included_by", r"\b(who|what|which \w+) (#?includes?)\b|\bincluded (by|from)\b"),
        ("included_by", r"包含|引用了?\S*的文件"),
        ("notes", r"\b(notes?|pages?)\b.*\b(about|mention\w*|discuss\w*|talk\w* about|on|refer)"),
        ("notes", r"笔记"),
    )
)
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_SUFFIX = r"\.(?:h|hh|hpp|hxx|inl|c|cc|cpp|cxx|py)"
_FILE = re.compile(rf"(?<![\w/.-])([\w.-]+(?:/[\w.-]+)*{_SUFFIX})\b", re.ASCII)
_NAME = re.compile(r"(?<![\w:.~])(~?[A-Za-z_]\w*(?:(?:::|\.)~?[A-Za-z_]\w*)*)(?:\(\))?", re.ASCII)
# Words of the questions themselves (lower case): never taken for a symbol's name.
_WORDS = frozenset(
    """a an the what which who whom where how do does did is are was were of from to in on
    by for with that this these those it its derive derives derived deriving inherit inherits
    inheriting subclass subclasses class classes base bases parent super superclass type types
    call calls called caller callers callee callees invoke invokes use uses include includes
    included file files header headers note notes page pages about mention mentions mentioned
    discuss discusses talk talks refer refers any all me show list find tell extends overrides
    functions function methods method symbol symbols and or i my our""".split()  # noqa: SIM905
)

_STARTERS = frozenset(
    [
        "what",
        "which",
        "who",
        "where",
        "how",
        "do",
        "does",
        "is",
        "are",
        "list",
        "show",
        "find",
        "tell",
    ]
)


@dataclass(frozen=True)
class GraphAsk:
    relation: str  # callers | callees | bases | derived | includes | included_by | notes
    names: tuple[str, ...]  # what the question may be about, most specific first


def graph_ask(question: str) -> GraphAsk | None:
    """The relation the question asks about and its candidate names; None: not relational."""
    relation = next((r for r, pattern in _ASKS if pattern.search(question)), None)
    if relation is None:
        return None
    names = _names(question, files=relation in FILE_ASKS)
    return GraphAsk(relation, names) if names else None


# "the note about X and the code that implements it", "X 的笔记和实现代码": a note ↔ code pair.
_PAIR = (
    re.compile(
        r"\b(notes?|docs?|documentation|write-?ups?)\b.*\b(code|implementations?|implement\w*"
        r"|source)\b|\b(code|implementations?|source)\b.*\b(notes?|docs?|documentation)\b",
        re.IGNORECASE,
    ),
    re.compile(r"(笔记|文档).*(代码|实现)|(代码|实现).*(笔记|文档)"),
)


def pair_ask(question: str) -> tuple[str, ...] | None:
    """The names a pair question ("the note about X and the code that implements it", "X 的笔
    记和实现代码") writes, most specific first (maybe none); None: not a pair question."""
    if not any(pattern.search(question) for pattern in _PAIR):
        return None
    return _names(question, files=False)


def _names(question: str, files: bool) -> tuple[str, ...]:
    found: list[str] = []

    def add(name: str) -> None:
        name = name.strip().strip("`").removesuffix("()").strip()
        # `Base` may be a class, `base` is a word; a question's first word is capitalised
        word = name in _WORDS or name.casefold() in _STARTERS
        if name and not word and name not in found:
            found.append(name)

    for written in _BACKTICKED.findall(question):  # written as code: the surest
        add(written)
    for path in _FILE.findall(question):
        add(path)
    if files:
        return tuple(n for n in found if _FILE.fullmatch(n) or "/" in n or "." in n)
    words = [w for w in _NAME.findall(question) if not _FILE.fullmatch(w)]
    # qualified names, then CamelCase or snake_case, then any other word
    for test in (
        lambda w: "::" in w or "." in w,
        lambda w: any(c.isupper() for c in w[1:]) or "_" in w or w[:1].isupper(),
        lambda w: True,
    ):
        for word in words:
            if test(word):
                add(word)
    return tuple(found)


def reason(relation: str, subject: str, confidence: float) -> str:
    """Why a unit was added, as `search --explain` and the answer trace show it."""
    verb = {
        "callers": "CALLS",
        "callees": "CALLED BY",
        "derived": "INHERITS",
        "bases": "BASE OF",
        "includes": "INCLUDED BY",
        "included_by": "INCLUDES",
        "notes": "MENTIONS",
    }[relation]
    return f"graph: {verb} {subject} (confidence {confidence:.2f})"


def fuse_route(
    searched: list[SearchResult], routed: list[SearchResult], k: int, rrf_k: int
) -> list[SearchResult]:
    """The `k` best of the searched list and the route's list by reciprocal rank; a unit in
    both keeps the searched result and gains the route's reason. No route hit: `searched`."""
    if not routed:
        return searched
    scores: dict[tuple[str, str], float] = {}
    kept: dict[tuple[str, str], SearchResult] = {}
    for ranking in (searched, routed):
        for rank, result in enumerate(ranking):
            key = (result.collection, result.chunk_id)
            scores[key] = scores.get(key, 0.0) + 1.0 / (rrf_k + rank + 1)
            if key not in kept:
                kept[key] = result
            elif result.graph_reason and not kept[key].graph_reason:
                kept[key] = replace(kept[key], graph_reason=result.graph_reason)
    order = sorted(scores, key=lambda key: -scores[key])  # stable: searched first on a tie
    return [kept[key] for key in order[:k]]
