"""Plain data shared by the vault stage and everything after it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class VaultWarning:
    """Something wrong with a note that was handled rather than raised.

    `code` is a stable machine-readable word (see WARNING_CODES); `message` is for people.
    """

    code: str
    message: str
    note: str  # vault-relative path of the note being processed
    target: str | None = None  # the embed/link target text, when the warning is about one
    line: int | None = None  # 1-based line in `note`, when known

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "note": self.note,
            "target": self.target,
            "line": self.line,
        }


# Every warning code the vault stage emits. The conformance fixtures use these words.
WARNING_CODES = frozenset(
    {
        "missing_note",  # embed target note does not exist
        "missing_heading",  # target note exists, heading does not
        "missing_block",  # target note exists, ^block-id does not
        "self_embed",  # a note embeds itself (whole note)
        "cycle",  # A embeds B embeds A
        "max_depth",  # embeds nested deeper than MAX_EMBED_DEPTH
        "invalid_utf8",  # bytes that are not UTF-8 (decoded with replacement characters)
        "binary",  # a .md file that is really binary (NUL bytes); skipped
        "too_large",  # over the size limit; skipped
        "empty",  # empty or whitespace-only note
        "unreadable",  # OS error while reading
        "bad_frontmatter",  # YAML frontmatter that does not parse to a mapping
        # other source kinds (sources/): the file gave no units
        "encrypted",  # a PDF that needs a password
        "damaged",  # a PDF that PDFium cannot open or read (truncated, not a PDF)
        "no_text_layer",  # a PDF without text (scanned pages); OCR is not done
        "too_many_pages",  # a PDF over max_pdf_pages
        "bad_canvas",  # a .canvas file that is not JSON Canvas
        # code sources (sources/code/): the file gave no units
        "unknown_encoding",  # neither UTF-8 nor a BOM-marked UTF-16/32 text
        "minified",  # lines so long the file is generated or minified (not read)
    }
)


@dataclass(frozen=True)
class Span:
    """Provenance of one stretch of resolved text.

    Offsets are character offsets into `ResolvedNote.text` (start inclusive, end exclusive).
    Spans are sorted, do not overlap and cover the whole text.
    """

    start: int
    end: int
    origin: str  # vault-relative path of the note this text was written in
    origin_line: int  # 1-based file line in `origin` where this stretch starts
    host_line: int  # 1-based file line in the resolved note where it appears (the embed's line)


@dataclass
class ResolvedNote:
    """A note with its frontmatter split off and every resolvable `![[embed]]` inlined."""

    path: str  # vault-relative, forward slashes, NFC
    text: str  # body after frontmatter, embeds resolved
    frontmatter: dict[str, Any] = field(default_factory=dict)
    body_start_line: int = 1  # 1-based file line where `text` starts (after frontmatter)
    spans: list[Span] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)  # notes embedded, transitively, sorted
    warnings: list[VaultWarning] = field(default_factory=list)

    @property
    def title(self) -> str:
        """The note's name as Obsidian shows it: the file name without `.md`."""
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name
