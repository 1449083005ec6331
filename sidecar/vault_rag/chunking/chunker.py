"""Resolved note → chunks: heading sections, sized, with citation and provenance metadata.

Pipeline: markdown-it block tokens → heading sections (`blocks.py`) → each section packed into
pieces within the size/token limits (`split.py`) → short sections merged along the heading
tree → `Chunk`s.

Decisions (see also the module docstrings of `size.py` and `split.py`):
- A chunk's `text` is always `note.text[char_start:char_end]` (recorded in `extra`), trimmed of
  blank lines around it; pieces of a split paragraph start mid-line and repeat up to
  `overlap_chars` characters of the piece before (`extra["overlap"]` says how many).
- Sizes count the embedding model's tokens when `ChunkOptions.size_in_tokens` is set (what the
  index uses: English and Chinese then carry a like amount of text per unit), else size units.
- Merging is bottom-up over the heading tree: a heading's own text and its child subtrees, or
  sibling subtrees, merge greedily while the growing chunk is under `target_min` and the
  result stays within `target_max`; a subtree that had to be split is never merged into.
  Every chunk keeps the heading path and `anchor` of the section its text begins in (for a
  merged chunk, its first section), so `[[note#anchor]]` jumps to the start of the chunk and
  the path names it; text before the first heading takes the note's title as its path (its
  anchor stays "", the top of the note).
- Small-to-big: with `context_chars` each chunk records its enclosing section, bounded
  (`enclosing.py`), in `extra` (`context`, `context_start/_end`, `context_line_start/_end`).
- Headings that came from an `![[embed]]` split sections and appear in `hierarchy_path`, but
  `anchor` is the deepest heading written in the note itself, so `[[note_path#anchor]]`
  always resolves.
- `id` = sha256(note path, hierarchy_path, anchor, ordinal among chunks with that path and
  anchor)[:16]: text edits in other sections leave it alone (unless they change whether this
  section merges with a neighbour); renaming or moving its heading changes it.
- `embed_text` = "# {title} ({aliases})" + ("\n## {hierarchy_path}" unless it is just the
  title) + "\n\n" + text; the alias list is left out when the note has none.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from vault_rag.chunking.blocks import Document, build_sections
from vault_rag.chunking.enclosing import SectionRange, enclosing, section_range
from vault_rag.chunking.provenance import Provenance
from vault_rag.chunking.size import text_size
from vault_rag.chunking.split import Budget, Splitter
from vault_rag.chunking.types import HIERARCHY_SEPARATOR, Chunk
from vault_rag.vault.frontmatter import as_string_list
from vault_rag.vault.types import ResolvedNote

log = logging.getLogger(__name__)
ID_HEX_CHARS = 16


@dataclass(frozen=True)
class ChunkOptions:
    # Targets count size units (`size.py`), or the model's tokens of the body (header and
    # special tokens left out) when `size_in_tokens` is set: the index always sets it.
    target_min: int = 500  # shorter sibling sections are merged up to this
    target_max: int = 1000  # longer sections are split (code blocks excepted)
    overlap_chars: int = 50  # repeated at the start of each piece of a split paragraph
    # Optional cap from the embedding model: no embed_text may count more than max_tokens.
    max_tokens: int | None = None
    count_tokens: Callable[[str], int] | None = None
    size_in_tokens: bool = False  # measure targets with count_tokens (the model's tokenizer)
    # Small-to-big: each chunk records its enclosing section, at most this many characters,
    # as the context search results and answers show (0: the chunk's own text only).
    context_chars: int = 0

    def __post_init__(self) -> None:
        if self.target_max < 1 or not 0 <= self.target_min <= self.target_max:
            raise ValueError("need 0 <= target_min <= target_max and target_max >= 1")
        if self.overlap_chars < 0:
            raise ValueError("overlap_chars must be >= 0")
        if self.max_tokens is not None and (self.max_tokens < 1 or self.count_tokens is None):
            raise ValueError("max_tokens needs count_tokens and must be >= 1")
        if self.size_in_tokens and self.count_tokens is None:
            raise ValueError("size_in_tokens needs count_tokens")
        if self.context_chars < 0:
            raise ValueError("context_chars must be >= 0")

    def measure(self) -> Callable[[str], int]:
        """The size function the targets are counted in (see the fields above)."""
        count = self.count_tokens
        if not self.size_in_tokens or count is None:
            return text_size
        overhead = count("")  # <s>, the passage prefix, </s>: not part of the body's size
        return lambda text: max(0, count(text) - overhead)


@dataclass
class _Draft:
    start: int
    end: int
    path: tuple[str, ...]
    anchor: str
    size: int
    overlap: int = 0
    code_window: bool = False
    mergeable: bool = True  # a whole section in one piece
    section: int = 0  # index into _Chunker.ranges: the heading section the piece lies in


def chunk_note(note: ResolvedNote, options: ChunkOptions | None = None) -> list[Chunk]:
    """Chunk one resolved note. Never raises: on an internal error it logs and falls back to
    plain blank-line windows (marked `extra["fallback"]`) rather than lose the note."""
    opts = options or ChunkOptions()
    try:
        return _Chunker(note, opts).run()
    except Exception:
        log.exception("chunker failed on %s; using plain windows", note.path)
        try:
            return _fallback(note, opts)
        except Exception:
            log.exception("fallback chunker failed on %s", note.path)
            return []


class _Chunker:
    def __init__(self, note: ResolvedNote, opts: ChunkOptions) -> None:
        self.note, self.opts = note, opts
        self.text = note.text
        self.title = note.title
        # One note asks for the same strings' counts again and again (fits, pack, header):
        # a real tokenizer is not free, so count each string once.
        count = lru_cache(maxsize=16384)(opts.count_tokens) if opts.count_tokens else None
        self.cap = count if opts.max_tokens is not None else None
        self.measure = replace(opts, count_tokens=count).measure()
        # Text before the first heading is cited by the note's title (its anchor stays "").
        self.root_path: tuple[str, ...] = (self.title,) if self.title else ()
        self.ranges: list[SectionRange] = []
        self.headers: dict[tuple[str, ...], str] = {}
        fm = note.frontmatter if isinstance(note.frontmatter, dict) else {}
        # Aliases are how the user names the note, often in the other language (a Chinese
        # alias on an English note): in the header they make both retrievers see them.
        self.aliases = _unique(as_string_list(fm.get(k)) for k in ("aliases", "alias"))

    def run(self) -> list[Chunk]:
        if not self.text.strip():
            return []
        self.doc = Document(self.text)
        self.prov = Provenance(self.note, self.doc)
        sections: list[tuple[int, list[_Draft]]] = []
        for n, section in enumerate(build_sections(self.doc, self._linkable)):
            path = section.path or self.root_path
            self.ranges.append(section_range(self.doc, section))
            splitter = Splitter(
                self.doc, self._budget(path), self.opts.target_min, self.opts.overlap_chars
            )
            pieces = splitter.pack(splitter.units(section.blocks))
            pieces = [p for p in pieces if self.text[p.start : p.end].strip()]
            drafts = []
            for p in pieces:
                size = self.measure(self.text[p.start : p.end])
                draft = _Draft(p.start, p.end, path, section.anchor, size, p.overlap)
                draft.code_window, draft.mergeable = p.code_window, len(pieces) == 1
                draft.section = n
                drafts.append(draft)
            sections.append((section.level, drafts))
        items, _ = self._nodes(sections, 0, -1)
        return self._build(self._combine(items))

    def _linkable(self, offset: int) -> bool:
        """Whether a heading at `offset` is in this note's file (a `[[note#...]]` target)."""
        return self.prov.origin_at(offset) == self.note.path

    # ---- limits -----------------------------------------------------------------------------

    def header(self, path: tuple[str, ...]) -> str:
        """Title + heading path; under a token cap it shrinks (path, then title) rather than
        take more than half of the budget. Cached: a real tokenizer is not free."""
        if path in self.headers:
            return self.headers[path]
        title = self.title
        if self.aliases:
            title = f"{title} ({', '.join(self.aliases)})" if title else ", ".join(self.aliases)
        lines = [f"# {title}"] if title else []
        if path and path != self.root_path:  # the title is already the first line
            lines.append(f"## {HIERARCHY_SEPARATOR.join(path)}")
        if self.cap is not None and self.opts.max_tokens is not None:
            while lines and self.cap("\n".join(lines) + "\n\n") > self.opts.max_tokens // 2:
                lines.pop()
        self.headers[path] = "\n".join(lines)
        return self.headers[path]

    def _budget(self, path: tuple[str, ...]) -> Budget:
        return Budget(
            self.text,
            self.header(path),
            self.opts.target_max,
            self.opts.max_tokens,
            self.cap,
            self.measure,
        )

    # ---- merging ----------------------------------------------------------------------------

    def _nodes(
        self, sections: list[tuple[int, list[_Draft]]], i: int, level: int
    ) -> tuple[list[list[list[_Draft]]], int]:
        """The groups of each heading subtree from `i` on that lies under a heading of `level`
        (one list per subtree), and the index after them.

        Bottom-up: a subtree's own section and its child subtrees are combined first; a subtree
        that ends up as one whole, short group is then a "short sibling" that its parent merges
        with the next ones. A subtree that had to be split stays as it is.
        """
        items: list[list[list[_Draft]]] = []
        while i < len(sections) and sections[i][0] > level:
            own_level, drafts = sections[i]
            children, i = self._nodes(sections, i + 1, own_level)
            own = [[d] for d in drafts]
            items.append(self._combine([own, *children] if own else children))
        return items, i

    def _combine(self, items: list[list[list[_Draft]]]) -> list[list[_Draft]]:
        """Concatenate items' groups, merging adjacent single-group items greedily while the
        merged group is under target_min; a short last group then joins the one before it."""
        out: list[list[_Draft]] = []
        small: list[bool] = []  # out[k] came from single-group items, so it may merge
        for item in items:
            if len(item) == 1 and all(d.mergeable for d in item[0]):
                if (
                    out
                    and small[-1]
                    and _size(out[-1]) < self.opts.target_min
                    and self._joins(out[-1], item[0])
                ):
                    out[-1] = out[-1] + item[0]
                    continue
                out.append(list(item[0]))
                small.append(True)
            else:
                out.extend(item)
                small.extend([False] * len(item))
        k = len(out) - 1
        while k > 0:
            if (
                small[k]
                and small[k - 1]
                and _size(out[k]) < self.opts.target_min
                and self._joins(out[k - 1], out[k])
            ):
                out[k - 1] = out[k - 1] + out.pop(k)
                small.pop(k)
            k -= 1
        return out

    def _joins(self, first: list[_Draft], second: list[_Draft]) -> bool:
        if _size(first) + _size(second) > self.opts.target_max:
            return False
        if self.cap is None:
            return True
        return self._budget(first[0].path).hard_fits(first[0].start, second[-1].end)

    # ---- chunks -----------------------------------------------------------------------------

    def _build(self, groups: list[list[_Draft]]) -> list[Chunk]:
        prov = self.prov
        fm = self.note.frontmatter if isinstance(self.note.frontmatter, dict) else {}
        tags = _unique(as_string_list(fm.get(k), split_spaces=True) for k in ("tags", "tag"))
        aliases = self.aliases
        ordinals: dict[tuple[str, str], int] = {}
        seen: set[str] = set()
        chunks: list[Chunk] = []
        for group in groups:
            first = group[0]
            # A unit is cited where its text begins: its first section's path and anchor.
            path = first.path
            for start, end, over_cap in self._capped(first.start, group[-1].end, path):
                body = self.text[start:end]
                if not body.strip():
                    continue
                hierarchy = HIERARCHY_SEPARATOR.join(path)
                header = self.header(path)
                embed_text = f"{header}\n\n{body}" if header else body
                key = (hierarchy, first.anchor)
                chunk_id = ""
                while not chunk_id or chunk_id in seen:  # a hash collision must not merge ids
                    ordinal = ordinals.get(key, 0)
                    ordinals[key] = ordinal + 1
                    chunk_id = _sha(self.note.path, hierarchy, first.anchor, str(ordinal))
                    chunk_id = chunk_id[:ID_HEX_CHARS]
                seen.add(chunk_id)
                overlap = first.overlap if start == first.start else 0
                extra: dict[str, Any] = {"char_start": start, "char_end": end, "overlap": overlap}
                if any(d.code_window for d in group):
                    extra["code_window"] = True
                if over_cap:
                    extra["over_token_limit"] = True
                if self.cap is not None:
                    extra["tokens"] = self.cap(embed_text)
                self._add_context(extra, first.section, start, end)
                line_start = prov.file_line(start)
                origin, origins = prov.origins(start, end)
                chunks.append(
                    Chunk(
                        id=chunk_id,
                        note_path=self.note.path,
                        text=body,
                        embed_text=embed_text,
                        content_hash=_sha(embed_text),
                        hierarchy_path=hierarchy,
                        anchor=first.anchor,
                        line_start=line_start,
                        line_end=max(line_start, prov.file_line(end - 1)),
                        has_code=self.doc.has_code(start, end),
                        size=text_size(body),
                        title=self.title,
                        origin=origin,
                        origins=origins,
                        tags=tags,
                        aliases=aliases,
                        extra=extra,
                    )
                )
        return chunks

    def _add_context(self, extra: dict[str, Any], section: int, start: int, end: int) -> None:
        """Small-to-big: record the enclosing section (see `enclosing.py`) in `extra`."""
        if not self.opts.context_chars:
            return
        lo, hi = enclosing(self.doc, self.ranges, section, start, end, self.opts.context_chars)
        extra["context_start"], extra["context_end"] = lo, hi
        extra["context_line_start"] = line = self.prov.file_line(lo)
        extra["context_line_end"] = max(line, self.prov.file_line(hi - 1))
        if (lo, hi) != (start, end):  # else the context is the chunk's own text
            extra["context"] = self.text[lo:hi]

    def _capped(self, start: int, end: int, path: tuple[str, ...]) -> list[tuple[int, int, bool]]:
        """Safety net for the token cap: the splitter should already have kept every piece
        under it; if a tokenizer disagrees with itself, window the range rather than emit an
        over-long embed_text. `True` marks a piece that cannot fit even alone."""
        budget = self._budget(path)
        if self.cap is None or budget.hard_fits(start, end):
            return [(start, end, False)]
        splitter = Splitter(self.doc, budget, 0, 0)
        return [(s, e, not budget.hard_fits(s, e)) for s, e in splitter.windows(start, end)]


def _size(group: list[_Draft]) -> int:
    return sum(d.size for d in group)


def _unique(lists: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for items in lists for item in items))


def _sha(*parts: str) -> str:
    data = "\x1f".join(parts).encode("utf-8", "surrogatepass")  # lone surrogates must not raise
    return hashlib.sha256(data).hexdigest()


def _fallback(note: ResolvedNote, opts: ChunkOptions) -> list[Chunk]:
    """Blank-line paragraphs packed up to target_max, no markdown and no provenance: used only
    if the real chunker hits a bug, so a note is never dropped from the index."""
    text = note.text
    measure = opts.measure()
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    groups: list[tuple[int, int]] = []  # (first line, last line)
    size, i = 0, 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j + 1 < len(lines) and lines[j + 1].strip():
            j += 1
        para_size = measure("\n".join(lines[i : j + 1]))
        if groups and size + para_size <= opts.target_max:
            groups[-1], size = (groups[-1][0], j), size + para_size
        else:
            groups.append((i, j))
            size = para_size
        i = j + 1
    chunks: list[Chunk] = []
    for first, last in groups:
        body = text[starts[first] : starts[last] + len(lines[last])]
        embed_text = f"# {note.title}\n\n{body}"
        chunks.append(
            Chunk(
                id=_sha(note.path, "fallback", str(len(chunks)))[:ID_HEX_CHARS],
                note_path=note.path,
                text=body,
                embed_text=embed_text,
                content_hash=_sha(embed_text),
                hierarchy_path="",
                anchor="",
                line_start=note.body_start_line + first,
                line_end=note.body_start_line + last,
                has_code="```" in body or "~~~" in body,
                size=text_size(body),
                title=note.title,
                origin=note.path,
                origins=(note.path,),
                extra={"fallback": True, "char_start": starts[first]},
            )
        )
    return chunks
