"""Reading notes and listing them (MCP `read_note`, `list_notes` and the note resources).

A note is read as the index reads it: from the vault, with its `![[embeds]]` resolved through
the same note index the indexer uses (excluded folders and ignored ones left out, so an embed
of an excluded note stays unresolved and its text never appears). Lines are the note file's own
lines (as search hits and citations count them); an embed's text sits on the line of its embed.
"""

from __future__ import annotations

import base64
import binascii
import bisect
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from vault_rag.index.manifest import NoteRecord
from vault_rag.services.errors import ServiceError, bad_input, not_found
from vault_rag.services.parts import VaultParts, served_path, visible
from vault_rag.vault.embeds import resolve_note
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import UnsafePathError, resolve_inside
from vault_rag.vault.reader import is_note_path, read_note
from vault_rag.vault.types import ResolvedNote, Span

CUT_MARKER = "\n\n[… cut at {limit} characters: {rest} more; read on with start_line={line}]"


@dataclass
class EmbedSpan:
    """Text of the resolved note that another note wrote (an `![[embed]]`)."""

    note: str  # the note the text comes from
    origin_line: int  # its line in that note
    host_line: int  # the line of the embed in the note being read
    chars: int


@dataclass
class NoteText:
    path: str
    title: str
    text: str
    start_line: int  # file lines of the note that `text` covers
    end_line: int
    total_lines: int
    resolved: bool  # embeds resolved
    truncated: bool
    next_start_line: int | None  # where to read on when truncated
    embeds: list[EmbedSpan] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)  # notes embedded, transitively
    tags: list[str] = field(default_factory=list)
    indexed: bool = False
    warnings: list[str] = field(default_factory=list)


def read_note_text(
    parts: VaultParts,
    raw_path: str,
    *,
    resolve_embeds: bool = True,
    start_line: int | None = None,
    end_line: int | None = None,
    max_chars: int = 20_000,
) -> NoteText:
    """The note's text (lines `start_line`..`end_line` of its file, 1-based, inclusive), cut at
    `max_chars` with a marker saying where to read on."""
    path = served_path(raw_path, parts)
    if any(n is not None and n < 1 for n in (start_line, end_line)):
        raise bad_input("start_line and end_line count from 1")
    if start_line is not None and end_line is not None and end_line < start_line:
        raise bad_input(f"end_line {end_line} is before start_line {start_line}")
    vault = parts.index.vault_root
    ignores = parts.exclusions.ignores()
    try:
        on_disk = is_note_path(path, ignores) and resolve_inside(vault, path).is_file()
    except (UnsafePathError, OSError):
        on_disk = False
    if not on_disk:
        raise not_found(path)
    if resolve_embeds:
        note = resolve_note(vault, path, NoteIndex.from_vault(vault, ignores))
    else:
        source = read_note(vault, path)
        note = ResolvedNote(path=path, text=source.text, warnings=list(source.warnings))
        note.spans = [Span(0, len(note.text), path, 1, 1)] if note.text else []
    lines = _host_lines(note)
    total = lines[-1][0] if lines else 0
    first = start_line or 1
    last = end_line or max(total, first)
    kept = [(n, text) for n, text in lines if first <= n <= last]
    text = "".join(t for _, t in kept)
    truncated, next_line = False, None
    if len(text) > max_chars:
        cut = text[:max_chars]
        # Read on from the line the cut falls in (shown again whole); always forward, so a
        # caller following `next_start_line` ends even when one line is longer than the limit.
        at = kept[min(cut.count("\n"), len(kept) - 1)][0]
        next_line = max(at, first + 1)
        rest = len(text) - max_chars
        text = cut + CUT_MARKER.format(limit=max_chars, rest=rest, line=next_line)
        truncated = True
    record = parts.index.manifest.note(path)
    return NoteText(
        path=path,
        title=note.title,
        text=text,
        start_line=first,
        end_line=min(last, total) if total else last,
        total_lines=total,
        resolved=resolve_embeds,
        truncated=truncated,
        next_start_line=next_line,
        embeds=_embeds(note, first, last) if resolve_embeds else [],
        dependencies=[d for d in note.dependencies if visible(parts, d)],
        tags=_tags(note.frontmatter),
        indexed=record is not None,
        warnings=[f"{w.code}: {w.message}" for w in note.warnings],
    )


def _host_lines(note: ResolvedNote) -> list[tuple[int, str]]:
    """Each line of the resolved text (with its newline) and the file line it sits on."""
    starts = [s.start for s in note.spans]
    out: list[tuple[int, str]] = []
    offset = 0
    for line in note.text.splitlines(keepends=True):
        i = max(bisect.bisect_right(starts, offset) - 1, 0)
        span = note.spans[i] if note.spans else None
        if span is None:
            host = note.body_start_line + len(out)
        elif span.origin == note.path:
            host = span.origin_line + note.text.count("\n", span.start, offset)
        else:
            host = span.host_line
        out.append((host, line))
        offset += len(line)
    return out


def _embeds(note: ResolvedNote, first: int, last: int) -> list[EmbedSpan]:
    return [
        EmbedSpan(s.origin, s.origin_line, s.host_line, s.end - s.start)
        for s in note.spans
        if s.origin != note.path and first <= s.host_line <= last
    ]


def _tags(frontmatter: dict[str, Any]) -> list[str]:
    raw = frontmatter.get("tags") or []
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return [str(t).lstrip("#") for t in items if str(t).strip()]


# -- listing ------------------------------------------------------------------------------------
@dataclass
class NoteEntry:
    path: str
    title: str
    modified: str  # ISO 8601, UTC
    size: int


@dataclass
class NotePage:
    notes: list[NoteEntry]
    next_cursor: str | None  # None: this was the last page
    total: int | None = None  # notes matching, when counting them was cheap (no tag filter)


def list_notes(
    parts: VaultParts,
    *,
    folder: str | None = None,
    tag: str | None = None,
    modified_since: str | None = None,
    cursor: str | None = None,
    page_size: int = 100,
) -> NotePage:
    """The indexed notes, sorted by path, `page_size` at a time; `next_cursor` continues."""
    records = parts.index.manifest.notes()
    prefix = (folder or "").strip().strip("/")
    if prefix:
        served_path(prefix, parts)  # an excluded or unsafe folder is refused, not emptied
    since = _since(modified_since) if modified_since else None
    after = _decode_cursor(cursor) if cursor else None
    paths = sorted(
        p
        for p, r in records.items()
        if (not prefix or p.startswith(prefix + "/"))
        and (since is None or r.mtime_ns >= since)
        and visible(parts, p)
    )
    start = bisect.bisect_right(paths, after) if after is not None else 0
    wanted = tag.strip().lstrip("#").casefold() if tag else None
    page: list[NoteEntry] = []
    i = start
    while i < len(paths) and len(page) < page_size:
        p = paths[i]
        i += 1
        if wanted and not _has_tag(parts, p, wanted):
            continue
        page.append(_entry(p, records[p]))
    more = i < len(paths)
    return NotePage(
        notes=page,
        next_cursor=_encode_cursor(page[-1].path) if more and page else None,
        total=None if wanted else len(paths),
    )


def _has_tag(parts: VaultParts, path: str, wanted: str) -> bool:
    chunks = parts.index.manifest.note_chunks(path)
    tags = [t.lstrip("#").casefold() for t in chunks[0].tags] if chunks else []
    return any(t == wanted or t.startswith(wanted + "/") for t in tags)


def _entry(path: str, record: NoteRecord) -> NoteEntry:
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    when = datetime.fromtimestamp(record.mtime_ns / 1e9, UTC).isoformat(timespec="seconds")
    return NoteEntry(path=path, title=title, modified=when, size=record.size)


def _since(text: str) -> int:
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise bad_input(
            f"modified_since is not an ISO 8601 date or time: {text!r}", value=text
        ) from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1e9)


def _encode_cursor(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode()).decode()


def _decode_cursor(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor.encode()).decode()
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise ServiceError(422, "invalid_cursor", "the cursor is not one this server gave") from exc
