"""One section's blocks → pieces (character ranges) that respect the size and token limits.

Sizes are measured by `Budget.measure`: the embedding model's own tokens when the chunker
has a tokenizer (`ChunkOptions.size_in_tokens`), else size units (`size.py`).

Blocks become units; a unit that is too big on its own is broken into smaller units along the
structure, coarse to fine: list → top-level items, blockquote → its blocks, table → rows,
paragraph → sentences → words → characters. Fenced code, `$$` math and single list items are
atomic; only a token cap (`Budget.max_tokens`) can window them, by lines. Units are then packed
greedily into pieces of balanced size. A piece that starts inside a broken-up paragraph (or code
block) repeats about `overlap_chars` characters of the text before it, so no sentence loses its
context at a boundary.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from vault_rag.chunking.blocks import Block, Document
from vault_rag.chunking.size import is_cjk, text_size, unit_spans

# Sentence ends: CJK enders (with closing quotes/brackets), Latin enders before whitespace, and
# newlines. The cut goes after the whitespace that follows, so pieces start on a word.
_SENTENCE_END = re.compile(r"(?:[。！？；…]+[」』”’）》〉)\]\"']*|[.!?]+[)\]\"'”’]*(?=\s)|\n)\s*")
_ATOMIC = frozenset({"code", "math", "item"})  # split only when a token cap forces it


@dataclass
class Unit:
    start: int
    end: int
    size: int
    glue_next: bool = False  # keep in the same piece as the next unit (heading, code lead-in)
    cont: bool = False  # continues the previous unit's block: a piece starting here overlaps
    code_window: bool = False  # a line window of a code block too big for the token cap
    tokens: int = 0  # token count of the unit alone (only with a token cap)


@dataclass(frozen=True)
class Piece:
    start: int  # includes the overlap
    end: int
    overlap: int  # leading characters repeated from the previous piece
    code_window: bool


class Budget:
    """Size and token limits for pieces of one section (its header counts against tokens)."""

    def __init__(
        self,
        text: str,
        header: str,
        max_size: int,
        max_tokens: int | None = None,
        count_tokens: Callable[[str], int] | None = None,
        measure: Callable[[str], int] = text_size,
    ) -> None:
        self.text, self.header, self.max_size = text, header, max_size
        self.measure = measure  # the size target's unit: model tokens, or size units
        self.count = count_tokens if max_tokens is not None else None
        self.max_tokens = max_tokens or 0

    def embed_text(self, start: int, end: int) -> str:
        body = self.text[start:end]
        return f"{self.header}\n\n{body}" if self.header else body

    def tokens(self, start: int, end: int) -> int:
        return self.count(self.embed_text(start, end)) if self.count else 0

    def hard_fits(self, start: int, end: int) -> bool:
        return self.count is None or self.tokens(start, end) <= self.max_tokens

    def fits(self, start: int, end: int) -> bool:
        return self.measure(self.text[start:end]) <= self.max_size and self.hard_fits(start, end)


class Splitter:
    def __init__(self, doc: Document, budget: Budget, target_min: int, overlap: int) -> None:
        self.doc, self.budget = doc, budget
        self.text = doc.text
        self.target_min, self.overlap = target_min, overlap

    # ---- blocks → units -------------------------------------------------------------------

    def units(self, blocks: list[Block]) -> list[Unit]:
        ranged = [(b, r) for b in blocks if (r := self.doc.char_range(b.start_line, b.end_line))]
        out: list[Unit] = []
        for n, (block, (start, end)) in enumerate(ranged):
            size = self.budget.measure(self.text[start:end])
            soft_ok = block.kind in _ATOMIC or size <= self.budget.max_size
            if soft_ok and self.budget.hard_fits(start, end):
                units = [Unit(start, end, size)]
            else:
                units = self._expand(block, start, end)
            if not units:
                continue
            nxt = ranged[n + 1][0].kind if n + 1 < len(ranged) else ""
            if block.kind == "heading" or (block.kind == "paragraph" and nxt == "code"):
                units[-1].glue_next = True
            out.extend(units)
        return out

    def _expand(self, block: Block, start: int, end: int) -> list[Unit]:
        if block.kind in ("list", "quote", "item"):
            children = self.doc.children(block)
            if children:
                return self.units(children)
        if block.kind == "table":
            return [u for s, e in self._lines(start, end) for u in self._leaf(s, e)]
        if block.kind in ("code", "math"):
            units = []
            for s, e in self._lines(start, end):
                # only the cap brings us here: a line within it stays whole, however long
                fits = self.budget.hard_fits(s, e)
                units.extend([self._unit(s, e)] if fits else self._words(s, e))
            for n, unit in enumerate(units):
                unit.cont, unit.code_window = n > 0, block.kind == "code"
            return units
        return self._leaf(start, end)

    def _lines(self, start: int, end: int) -> list[tuple[int, int]]:
        first, last = self.doc.line_of(start), self.doc.line_of(end - 1)
        ranges = [(self.doc.line_starts[i], self.doc.line_end(i)) for i in range(first, last + 1)]
        return [(max(s, start), min(e, end)) for s, e in ranges if self.text[s:e].strip()]

    def _leaf(self, start: int, end: int) -> list[Unit]:
        """Prose → sentence units; a sentence still too big → word (then character) windows."""
        cuts = [m.end() for m in _SENTENCE_END.finditer(self.text, start, end) if m.end() < end]
        bounds = [start, *cuts, end]
        units: list[Unit] = []
        for s, e in itertools.pairwise(bounds):
            if not self.text[s:e].strip():
                continue
            if self.budget.fits(s, e):
                units.append(self._unit(s, e))
            else:
                units.extend(self._words(s, e))
        for n, unit in enumerate(units):
            unit.cont = n > 0
        return units

    def _words(self, start: int, end: int) -> list[Unit]:
        """Maximal windows cut between size units (words, CJK characters), then characters."""
        cuts = [s for s, _ in unit_spans(self.text, start, end) if s > start]
        units: list[Unit] = []
        for s, e in self._windows(start, end, cuts):
            if self.budget.fits(s, e) or e - s <= 1:
                units.append(self._unit(s, e))
            else:  # one "word" over the token cap: cut anywhere
                units.extend(self._unit(a, b) for a, b in self._windows(s, e, None))
        for unit in units:
            unit.cont = True
        return units

    def _windows(self, start: int, end: int, cuts: list[int] | None) -> list[tuple[int, int]]:
        """Consecutive ranges, each ending at the furthest cut that still fits; `cuts=None`
        allows a cut at every character. Galloping search keeps each window's cost close to
        its own length, however long the whole range is."""
        stops = [c for c in cuts if start < c < end] + [end] if cuts is not None else None
        out: list[tuple[int, int]] = []
        pos, idx = start, 0
        while pos < end:
            if stops is not None:
                idx = bisect.bisect_right(stops, pos, idx)
                base, n = idx, len(stops) - idx

                def at(k: int, base: int = base, stops: list[int] = stops) -> int:
                    return stops[base + k]
            else:
                n = end - pos

                def at(k: int, pos: int = pos) -> int:
                    return pos + 1 + k

            good, bad = 0, 1  # find the largest k < n with fits(pos, at(k)); k=0 always taken
            while bad < n and self.budget.fits(pos, at(bad)):
                good, bad = bad, bad * 2
            bad = min(bad, n)
            while bad - good > 1:
                mid = (good + bad) // 2
                if self.budget.fits(pos, at(mid)):
                    good = mid
                else:
                    bad = mid
            out.append((pos, at(good)))
            pos = at(good)
        return out

    def windows(self, start: int, end: int) -> list[tuple[int, int]]:
        """Word (then character) windows of [start, end) that each fit the budget."""
        return [(u.start, u.end) for u in self._words(start, end)]

    def _unit(self, start: int, end: int) -> Unit:
        return Unit(start, end, self.budget.measure(self.text[start:end]))

    # ---- units → pieces -------------------------------------------------------------------

    def pack(self, units: list[Unit]) -> list[Piece]:
        """Greedy packing towards equal-sized pieces; glued units stay together unless the
        token cap cannot hold them (the size target alone never breaks glue)."""
        if self.budget.count:
            for unit in units:
                unit.tokens = self.budget.count(self.text[unit.start : unit.end])
        groups: deque[list[Unit]] = deque()
        for unit in units:
            if groups and groups[-1][-1].glue_next:
                groups[-1].append(unit)
            else:
                groups.append([unit])
        total = sum(u.size for u in units)
        ideal = total / max(1, math.ceil(total / self.budget.max_size))
        pieces: list[Piece] = []
        cur: list[Unit] = []
        cur_start = cur_size = cur_tokens = 0
        while groups or cur:
            if not groups:
                pieces.append(self._flush(cur, cur_start, groups))
                cur = []
                continue
            group = groups.popleft()
            size = sum(u.size for u in group)
            tokens = sum(u.tokens for u in group)
            if not cur:
                cur_start = self._overlap_start(group, pieces)
                if len(group) > 1 and not self.budget.hard_fits(cur_start, group[-1].end):
                    groups.extendleft([u] for u in reversed(group))
                    continue
                # the repeated overlap counts towards the piece's size too
                overlap_size = self.budget.measure(self.text[cur_start : group[0].start])
                cur, cur_size = list(group), size + overlap_size
                cur_tokens = self.budget.tokens(cur_start, group[-1].end)
                continue
            if (
                cur_size + size <= self.budget.max_size
                and self._wanted(cur_size, cur_size + size, ideal)
                and self._tokens_ok(cur_tokens + tokens, cur_start, group[-1].end)
            ):
                cur.extend(group)
                cur_size, cur_tokens = cur_size + size, cur_tokens + tokens
                continue
            groups.appendleft(group)
            pieces.append(self._flush(cur, cur_start, groups))
            cur = []
        return pieces

    def _wanted(self, cur: int, cand: int, ideal: float) -> bool:
        if cur < self.target_min or cand <= ideal:
            return True
        return cand - ideal < ideal - cur  # overshooting the ideal less than stopping short

    def _tokens_ok(self, estimate: int, start: int, end: int) -> bool:
        """Summed unit counts over-estimate (special tokens per call): trust them when under
        the cap, count exactly otherwise. `_flush` re-checks exactly in any case."""
        if self.budget.count is None or estimate <= self.budget.max_tokens:
            return True
        return self.budget.hard_fits(start, end)

    def _flush(self, cur: list[Unit], start: int, groups: deque[list[Unit]]) -> Piece:
        if self.budget.count is not None and len(cur) > 1:
            keep = len(cur)
            if not self.budget.hard_fits(start, cur[-1].end):
                lo, hi = 1, len(cur) - 1  # largest prefix that fits exactly
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if self.budget.hard_fits(start, cur[mid - 1].end):
                        lo = mid
                    else:
                        hi = mid - 1
                keep = lo
            groups.extendleft([u] for u in reversed(cur[keep:]))
            cur = cur[:keep]
        end = cur[-1].end
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return Piece(start, end, cur[0].start - start, any(u.code_window for u in cur))

    def _overlap_start(self, group: list[Unit], pieces: list[Piece]) -> int:
        """Where a piece starting with `group` begins: a little before it when it continues a
        split block, on a word boundary, never before the previous piece's start."""
        first = group[0]
        if not (first.cont and pieces and self.overlap > 0):
            return first.start
        lo = max(pieces[-1].start + 1, first.start - self.overlap)
        if lo >= pieces[-1].end:  # only whitespace between: nothing to repeat
            return first.start
        text = self.text
        if first.code_window:  # code repeats whole lines only
            line_start = text.find("\n", lo - 1, first.start) + 1
            if lo <= line_start < pieces[-1].end and self.budget.hard_fits(
                line_start, group[-1].end
            ):
                return line_start
            return first.start
        for pos in range(lo, first.start):
            prev, char = text[pos - 1], text[pos]
            if char.isspace():
                continue
            if prev.isspace() or is_cjk(char) or is_cjk(prev) or not prev.isalnum():
                if self.budget.hard_fits(pos, group[-1].end):
                    return pos
                break
        return first.start
