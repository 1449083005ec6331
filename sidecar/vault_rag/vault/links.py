"""Wikilink resolution with Obsidian's rules (`MetadataCache.getFirstLinkpathDest`).

Obsidian looks a link up by file *name* first and only then uses the folders in the link to
choose between notes of the same name:

1. an empty link path (`[[#Heading]]`) is the source note itself;
2. candidates are the files whose name equals the link's last part, case-insensitively, with
   `.md` appended when the link has no extension (or the extension matched nothing);
3. a link path without folders and a single candidate resolves to it;
4. a link starting with `./` or `../` is tried relative to the source note's folder;
5. an exact vault-relative path (a leading `/` is allowed) wins; a leading `/` that matches no
   exact path resolves to nothing;
6. otherwise every candidate whose path ends with the link path is ranked: notes inside the
   source note's folder (or below it) first, then the shortest path, then alphabetical.

Two deliberate differences from Obsidian's string tests: path-suffix and folder-prefix tests
respect `/` boundaries (Obsidian's `endsWith`/`startsWith` would let `[[der/Note]]` match
`Folder/Note.md`), and only markdown notes are ever returned. `[[My.Notes]]` still finds
`My.Notes.md`; when nothing is found, `is_note_link` tells a missing note from a link to a
non-markdown file (`image.png`, `Board.canvas`), which is "not a note" rather than missing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

from vault_rag.vault.listing import iter_note_paths
from vault_rag.vault.reader import DEFAULT_IGNORES

NOTE_SUFFIX = ".md"

# An "extension" is a short alphanumeric tail with at least one letter: `png`, `mp3`, `canvas`.
# `Version 1.2` or `Dr. Who` are note names, not files with extensions.
_EXTENSION = re.compile(r"\.([0-9A-Za-z]*[A-Za-z][0-9A-Za-z]*)$")
_MAX_EXTENSION_LEN = 8
# `[[Note]]`, `![[Note#Heading|alias]]`; and markdown links to notes `[text](Folder/Note.md)`.
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MD_LINK = re.compile(r"\]\(<?([^()<>\n]+?\.md)(?:#[^()\n]*)?>?\)", re.IGNORECASE)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
# Obsidian's `stripHeading`: these characters count as spaces when headings are compared.
_HEADING_STRIP = re.compile(r"[!\"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\\r\n]")
_SPACES = re.compile(r"\s+")


def _norm(text: str) -> str:
    """The comparison form of a path: NFC, forward slashes, lower case (like JS toLowerCase)."""
    return unicodedata.normalize("NFC", text.replace("\\", "/")).lower()


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def file_extension(linkpath: str) -> str | None:
    """The lower-case extension of the last part of `linkpath`, or None (see `_EXTENSION`)."""
    match = _EXTENSION.search(_basename(linkpath.strip()))
    if match is None or len(match.group(1)) > _MAX_EXTENSION_LEN:
        return None
    return match.group(1).lower()


def is_note_link(linkpath: str) -> bool:
    """False for links that name a non-markdown file (`a.png`, `b.pdf`, `c.canvas`)."""
    ext = file_extension(linkpath)
    return ext is None or ext == "md"


def parse_link(inner: str) -> tuple[str, list[str]]:
    """Split the text inside `[[ ]]` into (link path, subpath parts), Obsidian's way: the alias
    starts at the first `|` (a `\\|` in a table is the same pipe), the subpath at the first `#`,
    and empty subpath parts are dropped (`Note##A#` is `Note#A`)."""
    link = inner.split("|", 1)[0].rstrip("\\")
    linkpath, _, subpath = link.partition("#")
    return linkpath.strip(), [part for part in subpath.split("#") if part]


def link_paths(text: str) -> list[str]:
    """The link paths (before `#` and `|`) of the note links in markdown `text`, in order:
    wikilinks and embeds, and markdown links to `.md` files; fenced code is left out."""
    prose = _FENCE.sub("", text)
    found = [parse_link(inner)[0] for inner in _WIKILINK.findall(prose)]
    found += [unquote(target) for target in _MD_LINK.findall(prose)]
    return [path for path in found if path]


def strip_heading(text: str) -> str:
    """The form in which Obsidian compares headings (`stripHeading`), lower-cased."""
    return _SPACES.sub(" ", _HEADING_STRIP.sub(" ", text)).strip().lower()


class NoteIndex:
    """The markdown notes of a vault, indexed by lower-case file name for link resolution.

    `paths` are vault-relative; non-markdown paths are ignored, NFD names are stored as NFC.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths: dict[str, str] = {}  # comparison form -> canonical path
        self._by_name: dict[str, list[str]] = {}  # lower-case file name -> canonical paths
        for raw in paths:
            path = unicodedata.normalize("NFC", raw.replace("\\", "/")).strip("/")
            if not path.lower().endswith(NOTE_SUFFIX):
                continue
            key = _norm(path)
            if key in self._paths:
                continue
            self._paths[key] = path
            self._by_name.setdefault(_basename(key), []).append(path)

    @classmethod
    def from_vault(cls, vault_root: Path, ignores: Iterable[str] = DEFAULT_IGNORES) -> NoteIndex:
        return cls(iter_note_paths(vault_root, ignores))

    def with_path(self, path: str) -> NoteIndex:
        """A copy that also knows `path` (a posted note that is not on disk yet)."""
        if path in self:
            return self
        return NoteIndex([*self._paths.values(), path])

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and _norm(path) in self._paths

    def __len__(self) -> int:
        return len(self._paths)

    @property
    def paths(self) -> list[str]:
        return sorted(self._paths.values())

    def resolve(self, linkpath: str, source_path: str) -> str | None:
        """The note a wikilink path points to from `source_path`, or None.

        `linkpath` is the part of the link before `#` and `|`. See the module docstring for the
        order of the rules.
        """
        matches = self.resolve_all(linkpath, source_path)
        return matches[0] if matches else None

    def resolve_all(self, linkpath: str, source_path: str) -> list[str]:
        """Every note `linkpath` could mean, best first (Obsidian's `getLinkpathDest`)."""
        linkpath = linkpath.strip()
        if not linkpath:
            canonical = self._paths.get(_norm(source_path))
            return [canonical] if canonical else []
        wanted = _norm(linkpath)
        candidates: list[str] = []
        if file_extension(linkpath) == "md":
            candidates = self._by_name.get(_basename(wanted), [])
        if not candidates:
            wanted = _norm(linkpath + NOTE_SUFFIX)
            candidates = self._by_name.get(_basename(wanted), [])
        if not candidates:
            return []
        if "/" not in wanted and len(candidates) == 1:
            return list(candidates)

        source_dir = _norm(_dirname(source_path))
        if wanted.startswith(("./", "../")):
            relative = _join_relative(source_dir, wanted)
            exact = [p for p in candidates if _norm(p) == relative]
            if exact:
                return exact
        rooted = wanted.lstrip("/")
        exact = [p for p in candidates if _norm(p) == rooted]
        if exact:
            return exact
        if wanted.startswith("/"):
            return []

        near: list[str] = []
        far: list[str] = []
        for path in candidates:
            key = _norm(path)
            if key != rooted and not key.endswith("/" + rooted):
                continue
            inside = not source_dir or key.startswith(source_dir + "/")
            (near if inside else far).append(path)
        near.sort(key=_rank)
        far.sort(key=_rank)
        return near + far


def _rank(path: str) -> tuple[int, str]:
    # Shortest path first, then alphabetical, so ties are deterministic.
    return (len(path), path)


def _join_relative(source_dir: str, wanted: str) -> str:
    """Resolve `./x` and `../x` against the (lower-case) folder of the source note."""
    folder = source_dir
    if wanted.startswith("./../"):
        wanted = wanted[2:]
    if wanted.startswith("./"):
        rest = wanted[2:]
    else:
        rest = wanted
        while rest.startswith("../"):
            rest = rest[3:]
            folder = _dirname(folder)
    return f"{folder}/{rest}" if folder else rest
