"""Inline `![[embeds]]` (and markdown-style `![](Note.md)` embeds of notes) the way Obsidian
renders them, keeping line provenance; `%%comments%%` are left out, as Obsidian shows none.

`![[Note]]` is the body without frontmatter, `![[Note#A#B]]` a heading section, `![[Note#^id]]`
a block without its marker; `|alias` is ignored. Only embeds in paragraph text count: code
spans, code blocks and HTML are not embeds, and embeds in headings or table cells stay verbatim
(several lines there would break them). Embedded markdown replaces the `![[...]]` text in place,
its later lines prefixed like the embedding line's container (`> `, list indent). Links to
non-markdown files stay silently; anything unresolvable (missing note/heading/block, self-embed,
cycle, depth) stays as the original text with a warning, and nothing raises.
Every rule, with its conformance case: shared-schemas/fixtures/embeds/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from vault_rag.vault.comments import CommentSpans, comment_spans, cut_comments, in_comment
from vault_rag.vault.frontmatter import split_frontmatter
from vault_rag.vault.links import NoteIndex, is_note_link, parse_link, strip_heading
from vault_rag.vault.paths import normalize_rel_path
from vault_rag.vault.reader import NoteSource, read_note
from vault_rag.vault.types import ResolvedNote, Span, VaultWarning

MAX_EMBED_DEPTH = 10
# A note embedding a note ten times, which embeds another ten times... grows exponentially;
# past this many inlined embeds per resolved note the rest stay as links.
MAX_EMBEDS = 1000

Loader = Callable[[str], str | NoteSource | None]

_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
_ID_ONLY = re.compile(r"^\^([A-Za-z0-9-]+)$")
# Quote markers, indentation and a list marker: what a continuation line must repeat.
_CONTAINER = re.compile(r"^(?:[ \t]*>)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?")
_NO_CODE = ("fence", "code_block", "html_block")


def bracket_link_rule(opener: str, token_type: str) -> Callable[[StateInline, bool], bool]:
    """A markdown-it inline rule turning `<opener>...]]` into one `token_type` token (content =
    the text inside). Running inside the inline parser means code spans and escapes are already
    handled the CommonMark way. `![[` gives embeds; the fixture generator also uses `[[`."""

    def rule(state: StateInline, silent: bool) -> bool:
        src, pos = state.src, state.pos
        if not src.startswith(opener, pos):
            return False
        end = src.find("]]", pos + len(opener))
        inner = src[pos + len(opener) : end] if end >= 0 else ""
        if not inner.strip() or any(c in inner for c in "[]\n"):
            return False
        if not silent:
            token = state.push(token_type, "", 0)
            token.content = inner
            token.meta = {"pos": pos}
        state.pos = end + 2
        return True

    return rule


_embed_rule = bracket_link_rule("![[", "obsidian_embed")

# `![alt](dest)` without a title; `dest` bare or in `<...>`. A URL scheme (`https:`,
# `obsidian:`) makes it external.
_MD_EMBED = re.compile(r"!\[([^\]\n]*)\]\((<[^<>\n]*>|[^\s()<>]+)\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_embed_rule(state: StateInline, silent: bool) -> bool:
    """`![alt](Other%20note.md)`: an embed of a note when the URL-decoded destination has no
    scheme and names a note (`.md` or no extension); anything else is left to the image rule.
    The token's content is the decoded link, `meta` has the raw text and the destination as
    written (the warning target)."""
    match = _MD_EMBED.match(state.src, state.pos)
    if match is None:
        return False
    dest = match.group(2)
    written = dest[1:-1] if dest.startswith("<") else dest
    link = unquote(written).strip()
    if not link or _SCHEME.match(written) or not is_note_link(parse_link(link)[0]):
        return False
    if not silent:
        token = state.push("obsidian_md_embed", "", 0)
        token.content = link
        token.meta = {"pos": state.pos, "raw": match.group(0), "target": written}
        token.meta["alt"] = match.group(1)
    state.pos = match.end()
    return True


_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_MD.inline.ruler.before("image", "obsidian_embed", _embed_rule)
_MD.inline.ruler.before("image", "obsidian_md_embed", markdown_embed_rule)


@dataclass(frozen=True)
class _Embed:
    line: int  # 0-based line in the body
    col: int
    raw: str  # `![[...]]` or `![alt](dest)`
    inner: str  # the text inside `[[ ]]`, or `dest` as written: the warning target
    prefix: str  # container prefix for continuation lines
    link: str  # what is resolved: `inner`, or the decoded `dest`


@dataclass(frozen=True)
class _Region:
    first: int  # 0-based body lines [first, stop)
    stop: int
    dedent: int = 0  # columns of leading whitespace removed from each line (list items)
    cut: tuple[int, int] | None = None  # (line, col): the line ends at col (a `^id` marker)


@dataclass
class _Doc:
    path: str
    lines: list[str]
    start: int  # file line of lines[0]
    embeds: dict[int, list[_Embed]] = field(default_factory=dict)
    comments: CommentSpans = field(default_factory=dict)
    headings: list[tuple[int, str, int]] = field(default_factory=list)  # (level, text, line)
    blocks: dict[str, _Region] = field(default_factory=dict)


@dataclass(slots=True)
class _Piece:
    text: str
    origin: str
    origin_line: int
    host_line: int
    embedded: bool


def _indent(line: str, cols: int = 1 << 30) -> tuple[int, int]:
    """(characters, columns) of leading whitespace, stopping at `cols` columns; a tab counts
    four columns, as in Obsidian's list-item dedent."""
    i = seen = 0
    while i < len(line) and seen < cols and line[i] in " \t":
        seen += 4 if line[i] == "\t" else 1
        i += 1
    return i, seen


def _locate(
    lines: list[str], first: int, content: str, pos: int, raw: str, inner: str, link: str
) -> _Embed | None:
    """Map an offset in an inline token's content back to (line, column) in the body."""
    j = content.count("\n", 0, pos)
    line_start = content.rfind("\n", 0, pos) + 1
    line_end = content.find("\n", pos)
    piece = content[line_start : line_end if line_end >= 0 else len(content)].rstrip()
    idx = first + j
    if idx >= len(lines):
        return None
    src = lines[idx]
    rel = pos - line_start
    # Inline content is the source line minus its container prefix (quote marker, indent).
    col = len(src.rstrip()) - len(piece) + rel
    if not (col >= rel and src.startswith(raw, col)):
        col = -1
        for _ in range(piece.count(raw, 0, rel) + 1):
            col = src.find(raw, col + 1)
            if col < 0:
                return None
    prefix = _CONTAINER.match(src[:col])
    cont = "".join(c if c in ">\t" else " " for c in prefix.group(0)) if prefix else ""
    return _Embed(idx, col, raw, inner, cont, link)


def _parse(path: str, body: str, start: int) -> _Doc:
    lines = body.split("\n")
    doc = _Doc(path, lines, start)
    try:
        tokens = _MD.parse(body)
    except Exception:  # a parser bug on hostile input must not lose the note: plain text
        return doc
    code = {
        line
        for tok in tokens
        if tok.level == 0 and tok.type in ("fence", "code_block") and tok.map
        for line in range(*tok.map)
    }
    doc.comments = comment_spans(lines, code)
    previous: tuple[int, int] | None = None
    for i, tok in enumerate(tokens):
        if tok.type == "inline" and tokens[i - 1].type == "paragraph_open" and tok.map:
            for child in tok.children or ():
                if child.type == "obsidian_embed":
                    raw = f"![[{child.content}]]"
                    inner = link = child.content
                elif child.type == "obsidian_md_embed":
                    raw, inner, link = child.meta["raw"], child.meta["target"], child.content
                else:
                    continue
                emb = _locate(lines, tok.map[0], tok.content, child.meta["pos"], raw, inner, link)
                if emb is not None and not in_comment(doc.comments.get(emb.line), emb.col):
                    doc.embeds.setdefault(emb.line, []).append(emb)
        elif tok.type == "heading_open" and tok.level == 0 and tok.map:
            doc.headings.append((int(tok.tag[1:]), tokens[i + 1].content, tok.map[0]))
        if tok.type == "list_item_open" and tok.map:
            _list_item_block(doc, tokens, i)
        if tok.level != 0 or tok.nesting == -1 or not tok.map:
            continue
        section = (tok.map[0], _last_text_line(lines, *tok.map) + 1)
        only_id = tok.type == "paragraph_open" and _ID_ONLY.match(tokens[i + 1].content.strip())
        if only_id and previous is not None:
            # `^id` alone after a list, quote or table names that whole previous block.
            doc.blocks.setdefault(only_id.group(1).lower(), _Region(*previous))
        elif tok.type not in (*_NO_CODE, "bullet_list_open", "ordered_list_open"):
            match = _BLOCK_ID.search(lines[section[1] - 1])
            if match:
                cut = (section[1] - 1, match.start())
                doc.blocks.setdefault(match.group(1).lower(), _Region(*section, cut=cut))
        previous = section
    return doc


def _last_text_line(lines: list[str], first: int, stop: int) -> int:
    last = min(stop, len(lines)) - 1
    while last > first and not lines[last].strip():
        last -= 1
    return last


def _list_item_block(doc: _Doc, tokens: list[Token], i: int) -> None:
    """A `^id` ending a list item's own text names the item with its nested children."""
    item = tokens[i]
    assert item.map is not None
    for tok in tokens[i + 1 :]:
        if tok.level <= item.level:
            return
        if tok.type == "paragraph_open" and tok.level == item.level + 1 and tok.map:
            marker_line = _last_text_line(doc.lines, *tok.map)
            match = _BLOCK_ID.search(doc.lines[marker_line])
            if match:
                stop = _last_text_line(doc.lines, *item.map) + 1
                region = _Region(
                    item.map[0],
                    stop,
                    dedent=_indent(doc.lines[item.map[0]])[1],
                    cut=(marker_line, match.start()),
                )
                doc.blocks.setdefault(match.group(1).lower(), region)
            return


def _find_subpath(doc: _Doc, parts: list[str]) -> _Region | None:
    """Obsidian's `resolveSubpath`: a block id, else a chain of headings, each found after the
    previous one at a deeper level; the section runs to the next heading of its level or higher."""
    if len(parts) == 1 and parts[0].startswith("^"):
        block = doc.blocks.get(parts[0][1:].lower())
        if block is not None:
            return block
    wanted = [strip_heading(p) for p in parts]
    found, level, current = 0, 0, None
    for lvl, text, line in doc.headings:
        if current is not None and lvl <= level:
            return _Region(current, line)
        if current is None and lvl > level and strip_heading(text) == wanted[found]:
            found, level = found + 1, lvl
            if found == len(wanted):
                current = line
    return _Region(current, len(doc.lines)) if current is not None else None


def _safe_split(text: str, path: str) -> tuple[dict[str, Any], str, int, list[VaultWarning]]:
    try:
        return split_frontmatter(text, path)
    except Exception as exc:  # odd YAML must cost the properties, never the note
        return {}, text, 1, [VaultWarning("bad_frontmatter", f"frontmatter failed: {exc}", path)]


class _Resolver:
    def __init__(self, index: NoteIndex, load: Callable[[str], NoteSource], max_depth: int):
        self.index = index
        self.load = load
        self.max_depth = max_depth
        self.docs: dict[str, _Doc | NoteSource] = {}
        self.warnings: list[VaultWarning] = []
        self.dependencies: set[str] = set()
        self.inlined = 0

    def doc(self, path: str) -> _Doc | NoteSource:
        if path not in self.docs:
            try:
                source = self.load(path)
            except Exception as exc:  # a loader failure is one unreadable note, not a crash
                source = NoteSource(path, skipped=True, warnings=[_unreadable(path, exc)])
            if source.skipped:
                self.docs[path] = source
            else:
                _, body, start, _ = _safe_split(source.text, path)
                self.docs[path] = _parse(path, body, start)
        return self.docs[path]

    def warn(self, code: str, message: str, doc: _Doc, emb: _Embed) -> None:
        self.warnings.append(VaultWarning(code, message, doc.path, emb.inner, doc.start + emb.line))

    def expand(
        self, doc: _Doc, region: _Region, chain: tuple[Any, ...], host: int | None
    ) -> list[_Piece]:
        """Pieces of `region` of `doc` with its embeds inlined. `host` is the embed line in the
        top note for embedded text, None for the top note's own text."""
        out: list[_Piece] = []
        for idx in range(region.first, region.stop):
            line = doc.lines[idx]
            file_line = doc.start + idx
            here = host if host is not None else file_line
            nested = host is not None
            own = partial(
                _Piece, origin=doc.path, origin_line=file_line, host_line=here, embedded=nested
            )
            pos = _indent(line, region.dedent)[0]
            end = region.cut[1] if region.cut and region.cut[0] == idx else len(line)
            cuts = doc.comments.get(idx)
            if cuts and not cut_comments(line, cuts, pos, end).strip():
                continue  # a line of comment only: not shown at all
            for emb in doc.embeds.get(idx, ()):
                if emb.col < pos or emb.col + len(emb.raw) > end:
                    continue
                inserted = self.embed(doc, emb, chain, here)
                if inserted is None:
                    continue
                out.append(own(cut_comments(line, cuts, pos, emb.col)))
                prefix = emb.prefix[_indent(emb.prefix, region.dedent)[0] :]
                for k, piece in enumerate(inserted):
                    out.append(piece)
                    if prefix and piece.text.endswith("\n"):
                        # A blank embedded line gets `>` or nothing, not trailing spaces.
                        blank = k + 1 < len(inserted) and inserted[k + 1].text.startswith("\n")
                        out.append(own(prefix.rstrip() if blank else prefix))
                pos = emb.col + len(emb.raw)
            tail = cut_comments(line, cuts, pos, end)
            out.append(own(tail + ("\n" if idx < region.stop - 1 else "")))
        return [p for p in out if p.text]

    def embed(
        self, doc: _Doc, emb: _Embed, chain: tuple[Any, ...], host: int
    ) -> list[_Piece] | None:
        linkpath, parts = parse_link(emb.link)
        target = self.index.resolve(linkpath, doc.path) if linkpath else doc.path
        if target is None:
            if is_note_link(linkpath):
                self.warn("missing_note", f"no note named {linkpath!r}", doc, emb)
            return None
        tdoc = self.doc(target)
        if isinstance(tdoc, NoteSource):
            code = tdoc.warnings[0].code if tdoc.warnings else "unreadable"
            self.warn(code, f"embedded note {target} was skipped ({code})", doc, emb)
            return None
        region = _find_subpath(tdoc, parts) if parts else _Region(0, len(tdoc.lines))
        if region is None:
            block = len(parts) == 1 and parts[0].startswith("^")
            code = "missing_block" if block else "missing_heading"
            self.warn(code, f"{target} has no {'#'.join(parts)!r}", doc, emb)
            return None
        key = (target, *((region.first, region.stop) if parts else ()))
        if target == doc.path and region.first <= emb.line < region.stop:
            self.warn("self_embed", "the embed lies inside what it embeds", doc, emb)
            return None
        if key in chain:
            self.warn("cycle", f"{target} is already being embedded: {chain[0][0]}", doc, emb)
            return None
        if len(chain) > self.max_depth or self.inlined >= MAX_EMBEDS:
            self.warn("max_depth", f"embeds nested deeper than {self.max_depth}", doc, emb)
            return None
        self.inlined += 1
        shown = [i for i in range(region.first, region.stop) if _visible(tdoc, region, i)]
        # Leading and trailing blank lines of the embedded part are dropped.
        trimmed = replace(region, first=shown[0], stop=shown[-1] + 1) if shown else None
        pieces = self.expand(tdoc, trimmed, (*chain, key), host) if trimmed else []
        self.dependencies.add(target)
        while pieces and pieces[-1].text.endswith("\n"):
            pieces[-1].text = pieces[-1].text.rstrip("\n")
            if not pieces[-1].text:
                pieces.pop()
        return pieces


def _visible(doc: _Doc, region: _Region, idx: int) -> bool:
    """Whether line `idx` of `region` has text once a `^id` marker is cut off."""
    line = doc.lines[idx]
    end = region.cut[1] if region.cut and region.cut[0] == idx else len(line)
    return bool(cut_comments(line, doc.comments.get(idx), 0, end).strip())


def _unreadable(path: str, exc: BaseException) -> VaultWarning:
    return VaultWarning("unreadable", f"cannot load note: {exc}", path)


def _as_source(path: str, loaded: str | NoteSource | None) -> NoteSource:
    if isinstance(loaded, NoteSource):
        return loaded
    if loaded is None:
        return NoteSource(path, skipped=True, warnings=[_unreadable(path, LookupError(path))])
    return NoteSource(path, text=_normalise_newlines(loaded))


def _normalise_newlines(text: str) -> str:
    # Posted text may carry CRLF; every line count below assumes "\n" (the reader does the same).
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _spans(pieces: Iterable[_Piece]) -> list[Span]:
    """Merge pieces into spans. Only the note's own text may run over several lines (its
    origin and host lines advance together); embedded spans never cross a line break."""
    spans: list[Span] = []
    offset = 0
    head: _Piece | None = None  # first piece of the current span
    newlines = 0  # line breaks in the current span so far
    for p in pieces:
        end = offset + len(p.text)
        if head is not None and _joins(head, newlines, p):
            spans[-1] = replace(spans[-1], end=end)
        else:
            spans.append(Span(offset, end, p.origin, p.origin_line, p.host_line))
            head, newlines = p, 0
        newlines += p.text.count("\n")
        offset = end
    return spans


def _joins(a: _Piece, newlines: int, b: _Piece) -> bool:
    if a.origin != b.origin or a.embedded != b.embedded:
        return False
    if a.embedded:
        return newlines == 0 and (a.origin_line, a.host_line) == (b.origin_line, b.host_line)
    return b.origin_line == a.origin_line + newlines and b.host_line == a.host_line + newlines


def resolve_text(
    path: str,
    text: str,
    index: NoteIndex,
    load: Loader,
    *,
    max_depth: int = MAX_EMBED_DEPTH,
) -> ResolvedNote:
    """Resolve a note given as text. `load(path)` returns another note's text (or a NoteSource,
    or None when it cannot be read); `path` must be a safe vault-relative path."""
    path = normalize_rel_path(path)
    text = _normalise_newlines(text)
    if path not in index:
        index = index.with_path(path)
    frontmatter, body, body_start, warnings = _safe_split(text, path)
    resolver = _Resolver(index, lambda p: _as_source(p, load(p)), max_depth)
    doc = _parse(path, body, body_start)
    resolver.docs[path] = doc
    pieces = resolver.expand(doc, _Region(0, len(doc.lines)), ((path,),), None)
    merged: list[VaultWarning] = []
    seen: set[tuple[Any, ...]] = set()
    for w in (*warnings, *resolver.warnings):  # a note embedded twice warns once
        if (key := (w.code, w.note, w.target, w.line)) not in seen:
            seen.add(key)
            merged.append(w)
    return ResolvedNote(
        path=path,
        text="".join(p.text for p in pieces),
        frontmatter=frontmatter,
        body_start_line=body_start,
        spans=_spans(pieces),
        dependencies=sorted(resolver.dependencies - {path}),
        warnings=merged,
    )


def resolve_note(
    vault_root: Path,
    rel_path: str,
    index: NoteIndex | None = None,
    *,
    reader: Callable[[Path, str], NoteSource] = read_note,
    max_depth: int = MAX_EMBED_DEPTH,
) -> ResolvedNote:
    """Read `rel_path` from the vault and resolve its embeds. A skipped note (binary, too large,
    unreadable) gives empty text plus the reader's warnings."""
    path = normalize_rel_path(rel_path)
    index = index if index is not None else NoteIndex.from_vault(vault_root)
    source = reader(vault_root, path)
    if source.skipped:
        return ResolvedNote(path=path, text="", warnings=list(source.warnings))
    resolved = resolve_text(
        path, source.text, index, lambda p: reader(vault_root, p), max_depth=max_depth
    )
    resolved.warnings[:0] = source.warnings
    return resolved
