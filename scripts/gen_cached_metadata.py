"""Write Obsidian-shaped `CachedMetadata` for the notes of every embed conformance case.

    python scripts/gen_cached_metadata.py            # (re)write every case
    python scripts/gen_cached_metadata.py --check    # exit 1 when a file is missing or stale
    python scripts/gen_cached_metadata.py CASE ...   # only these case folders
    python scripts/gen_cached_metadata.py --vault DIR --out FILE   # any vault (benchmarks)

The TypeScript resolver in obsidian-plugin/ works on Obsidian's `metadataCache`, which only
exists inside Obsidian. For the shared fixtures (shared-schemas/fixtures/embeds/) this script
produces what `app.metadataCache.getFileCache(file)` would return for each note and writes it as
`<case>/cached-metadata.json` = {"<vault-relative NFC path>": CachedMetadata, ...}.

The markdown is parsed by the Python resolver's own markdown-it-py parser
(`vault_rag.vault.embeds._MD`: CommonMark plus tables and its `![[embed]]` inline rule), so both
implementations see the same structure and the same embeds. The output imitates the shapes of
real Obsidian caches:

- positions are `{start, end}` of `{line, col, offset}`; lines are 0-based file lines (the
  frontmatter counts), `col`/`offset` count UTF-16 code units like JavaScript strings, and `end`
  is the end of the last non-blank line of the item;
- `sections` are the top-level blocks (`yaml`, `heading`, `paragraph`, `list`, `code`,
  `blockquote`, `callout`, `table`, `thematicBreak`, `html`), with `id` when a block id names
  them; `headings` are top-level headings only;
- `embeds`/`links` are the wikilinks found outside code (in headings and table cells too, as
  Obsidian lists them); `displayText` is the alias, or the link with `#` shown as ` > `;
- `listItems` have `parent` = the parent item's line, or minus the list's first line (-1 for a
  list on line 0), and a `position` that covers the item's own text, not its children; a nested
  item starts at its parent's content column, as Obsidian reports it;
- `blocks`: a ` ^id` at the end of a top-level block or of a list item's first paragraph, and a
  paragraph that is only `^id` naming the block before it (first definition of an id wins).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sidecar"))

from markdown_it import MarkdownIt
from markdown_it.token import Token

# The parser of the Python resolver itself (private, on purpose: the same tokens on both sides).
from vault_rag.vault.comments import comment_spans, in_comment
from vault_rag.vault.embeds import _MD as _EMBED_MD
from vault_rag.vault.embeds import _embed_rule, bracket_link_rule
from vault_rag.vault.frontmatter import split_frontmatter
from vault_rag.vault.listing import iter_note_paths
from vault_rag.vault.reader import read_note

FIXTURES = Path(__file__).resolve().parents[1] / "shared-schemas" / "fixtures" / "embeds"
OUTPUT = "cached-metadata.json"

_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
_ID_ONLY = re.compile(r"^\^([A-Za-z0-9-]+)$")
_CALLOUT = re.compile(r"^\s*>\s*\[!")
# Container prefix (quotes, indentation) before a list marker, then the marker and its spaces.
_LIST_MARKER = re.compile(r"^((?:[ \t]*>[ \t]?)*[ \t]*)([-*+]|\d{1,9}[.)])([ \t]+|$)")
_TASK = re.compile(r"^\[(.)\](?:[ \t]|$)")
_KEY_ORDER = (
    "frontmatter",
    "frontmatterPosition",
    "headings",
    "sections",
    "listItems",
    "blocks",
    "embeds",
    "links",
)
_SECTION_TYPES = {
    "paragraph_open": "paragraph",
    "heading_open": "heading",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "blockquote",
    "table_open": "table",
    "fence": "code",
    "code_block": "code",
    "hr": "thematicBreak",
    "html_block": "html",
}


_wikilink_rule = bracket_link_rule("[[", "wikilink")  # `[[link]]` (not an embed)


# Only for the `links` list: `_EMBED_MD` plus plain `[[links]]`. Structure and embeds always come
# from `_EMBED_MD`, so a `[[` rule can never change which embeds exist.
_LINK_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_LINK_MD.inline.ruler.before("image", "obsidian_embed", _embed_rule)
_LINK_MD.inline.ruler.before("link", "wikilink", _wikilink_rule)


def _u16(text: str) -> int:
    """Length of `text` in UTF-16 code units (JavaScript string length)."""
    return len(text.encode("utf-16-le")) // 2


class _File:
    """A note's lines with Obsidian-style locations."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += _u16(line) + 1

    def loc(self, line: int, col: int) -> dict[str, int]:
        """Location of code point column `col` of `line`."""
        u16col = _u16(self.lines[line][:col])
        return {"line": line, "col": u16col, "offset": self.starts[line] + u16col}

    def pos(self, first: int, last: int, start_col: int = 0) -> dict[str, Any]:
        """From (first, start_col) to the end of line `last`."""
        end = self.loc(last, len(self.lines[last]))
        return {"start": self.loc(first, start_col), "end": end}

    def last_text_line(self, first: int, stop: int) -> int:
        last = min(stop, len(self.lines)) - 1
        while last > first and not self.lines[last].strip():
            last -= 1
        return last


def _locate(lines: list[str], first: int, content: str, pos: int, raw: str) -> tuple[int, int]:
    """(line, column) of `raw` found at offset `pos` of an inline token's content, as
    `vault_rag.vault.embeds._locate` maps it; (-1, -1) when it cannot be found."""
    j = content.count("\n", 0, pos)
    line_start = content.rfind("\n", 0, pos) + 1
    line_end = content.find("\n", pos)
    piece = content[line_start : line_end if line_end >= 0 else len(content)].rstrip()
    idx = first + j
    if idx >= len(lines):
        return -1, -1
    src = lines[idx]
    rel = pos - line_start
    col = len(src.rstrip()) - len(piece) + rel
    if not (col >= rel and src.startswith(raw, col)):
        col = -1
        for _ in range(piece.count(raw, 0, rel) + 1):
            col = src.find(raw, col + 1)
            if col < 0:
                return -1, -1
    return idx, col


def _reference(inner: str, raw: str, file: _File, line: int, col: int) -> dict[str, Any]:
    link, bar, alias = inner.partition("|")
    display = alias if bar else " > ".join(p for p in link.split("#") if p) or link
    end = file.loc(line, col + len(raw))
    return {
        "link": link,
        "original": raw,
        "displayText": display,
        "position": {"start": file.loc(line, col), "end": end},
    }


def _references(file: _File, first: int, tokens: list[Token], kind: str) -> list[dict[str, Any]]:
    """`embeds` (kind `obsidian_embed`, with markdown-style `![](Note.md)` embeds) or `links`
    (`wikilink`), in text order; none inside `%%comments%%`, which Obsidian does not parse."""
    body = file.lines[first:]
    code = {
        line
        for tok in tokens
        if tok.level == 0 and tok.type in ("fence", "code_block") and tok.map
        for line in range(*tok.map)
    }
    comments = comment_spans(body, code)
    found: list[dict[str, Any]] = []
    for tok in tokens:
        if tok.type != "inline" or not tok.map:
            continue
        for child in tok.children or ():
            if child.type == kind:
                raw = f"{'!' if kind == 'obsidian_embed' else ''}[[{child.content}]]"
            elif kind == "obsidian_embed" and child.type == "obsidian_md_embed":
                raw = child.meta["raw"]
            else:
                continue
            line, col = _locate(body, tok.map[0], tok.content, child.meta["pos"], raw)
            if line < 0 or in_comment(comments.get(line), col):
                continue
            if child.type == "obsidian_md_embed":
                # Obsidian's `link` is the decoded destination; `displayText` the alt text.
                ref = _reference(child.content, raw, file, first + line, col)
                ref["displayText"] = child.meta["alt"]
            else:
                ref = _reference(child.content, raw, file, first + line, col)
            found.append(ref)
    return sorted(found, key=lambda r: r["position"]["start"]["offset"])


class _Blocks:
    """`blocks` in the order the Python resolver registers them: the first definition wins."""

    def __init__(self) -> None:
        self.by_id: dict[str, dict[str, Any]] = {}

    def add(self, block_id: str, position: dict[str, Any], owner: dict[str, Any]) -> None:
        if block_id.lower() in self.by_id:
            return
        self.by_id[block_id.lower()] = {"id": block_id, "position": position}
        owner.setdefault("id", block_id)


def _list_item(
    file: _File, first: int, tokens: list[Token], i: int, stack: list[tuple[int, int]]
) -> tuple[dict[str, Any], str | None]:
    """One `listItems` entry and the block id of the item's first paragraph."""
    tok = tokens[i]
    assert tok.map is not None
    line = first + tok.map[0]
    marker = _LIST_MARKER.match(file.lines[line])
    content_col = marker.end() if marker else 0
    start_col = stack[-1][1] if stack else (len(marker.group(1)) if marker else 0)
    own_end, block_id = _item_content(file, first, tokens, i)
    item: dict[str, Any] = {
        "parent": 0,  # set by the caller
        "position": file.pos(line, own_end, min(start_col, len(file.lines[line]))),
    }
    task = _TASK.match(file.lines[line][content_col:]) if marker else None
    if task:
        item["task"] = task.group(1)
    return item, block_id


def _item_content(file: _File, first: int, tokens: list[Token], i: int) -> tuple[int, str | None]:
    """(last file line of the item's own text, block id of its first paragraph): the item's
    own text is every direct child block except nested lists."""
    item = tokens[i]
    assert item.map is not None
    own_end = first + item.map[0]
    block_id: str | None = None
    seen_paragraph = False
    for tok in tokens[i + 1 :]:
        if tok.level <= item.level:
            break
        if tok.level != item.level + 1 or tok.nesting == -1 or not tok.map:
            continue
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            continue
        last = file.last_text_line(first + tok.map[0], first + tok.map[1])
        own_end = max(own_end, last)
        if tok.type == "paragraph_open" and not seen_paragraph:
            seen_paragraph = True
            match = _BLOCK_ID.search(file.lines[last])
            block_id = match.group(1) if match else None
    return own_end, block_id


def _walk(file: _File, first: int, tokens: list[Token], meta: dict[str, Any]) -> _Blocks:
    """`sections`, `headings` and `listItems` in one pass over the tokens, registering block ids
    in token order, as `vault_rag.vault.embeds._parse` does."""
    blocks = _Blocks()
    stack: list[tuple[int, int]] = []  # open list items: (file line, content column)
    list_starts: list[int] = []  # first file line of each open list
    previous: dict[str, Any] | None = None
    for i, tok in enumerate(tokens):
        if tok.type in ("bullet_list_open", "ordered_list_open") and tok.map:
            list_starts.append(first + tok.map[0])
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            list_starts.pop()
        elif tok.type == "list_item_close":
            stack.pop()
        elif tok.type == "list_item_open" and tok.map:
            item, block_id = _list_item(file, first, tokens, i, stack)
            # Obsidian: a top-level item's parent is minus the list's first line (-1 for 0).
            item["parent"] = stack[-1][0] if stack else -(list_starts[-1] or 1)
            if block_id:
                blocks.add(block_id, item["position"], item)
            meta.setdefault("listItems", []).append(item)
            marker = _LIST_MARKER.match(file.lines[first + tok.map[0]])
            stack.append((first + tok.map[0], marker.end() if marker else 0))
        if tok.level != 0 or tok.nesting == -1 or not tok.map or tok.type not in _SECTION_TYPES:
            continue
        start = first + tok.map[0]
        last = file.last_text_line(start, first + tok.map[1])
        kind = _SECTION_TYPES[tok.type]
        if kind == "blockquote" and _CALLOUT.match(file.lines[start]):
            kind = "callout"
        section: dict[str, Any] = {"type": kind, "position": file.pos(start, last)}
        if kind == "heading":
            heading = {"heading": tokens[i + 1].content, "level": int(tok.tag[1:])}
            meta.setdefault("headings", []).append({**heading, "position": section["position"]})
        only_id = kind == "paragraph" and _ID_ONLY.match(tokens[i + 1].content.strip())
        if only_id and previous is not None:
            # `^id` alone after a list, quote or table names that whole previous block.
            blocks.add(only_id.group(1), previous["position"], previous)
        elif kind not in ("code", "html", "list"):
            match = _BLOCK_ID.search(file.lines[last])
            if match:
                blocks.add(match.group(1), section["position"], section)
        meta.setdefault("sections", []).append(section)
        previous = section
    return blocks


def note_metadata(text: str) -> dict[str, Any]:
    """The CachedMetadata Obsidian would hold for a note with this text."""
    file = _File(text)
    frontmatter, body, body_start, _ = split_frontmatter(text)
    first = body_start - 1  # 0-based file line of the body
    meta: dict[str, Any] = {}
    if first > 0:
        position = file.pos(0, first - 1)
        meta["frontmatter"] = frontmatter
        meta["frontmatterPosition"] = position
        meta["sections"] = [{"type": "yaml", "position": position}]
    tokens = _EMBED_MD.parse(body)
    blocks = _walk(file, first, tokens, meta)
    if blocks.by_id:
        meta["blocks"] = blocks.by_id
    embeds = _references(file, first, tokens, "obsidian_embed")
    links = _references(file, first, _LINK_MD.parse(body), "wikilink")
    for key, found in (("embeds", embeds), ("links", links)):
        if found:
            meta[key] = found
    return {key: meta[key] for key in _KEY_ORDER if key in meta}


def case_metadata(case: Path) -> dict[str, Any]:
    return vault_metadata(case / "vault")


def vault_metadata(vault: Path) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for path in iter_note_paths(vault):
        source = read_note(vault, path)
        result[path] = note_metadata(source.text)
    return result


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case folder names (default: all)")
    parser.add_argument("--check", action="store_true", help="only report missing/stale files")
    parser.add_argument("--vault", type=Path, help="write the metadata of this vault instead")
    parser.add_argument("--out", type=Path, help="where --vault's metadata goes (JSON)")
    args = parser.parse_args(argv)
    if args.vault is not None:
        if args.out is None:
            parser.error("--vault needs --out")
        data = vault_metadata(args.vault)
        args.out.write_text(json.dumps(data, ensure_ascii=False, default=str), encoding="utf-8")
        print(f"wrote {args.out}: {len(data)} notes")
        return 0
    names = args.cases or sorted(p.name for p in FIXTURES.iterdir() if (p / "case.json").is_file())
    stale: list[str] = []
    for name in names:
        target = FIXTURES / name / OUTPUT
        text = render(case_metadata(FIXTURES / name))
        current = target.read_bytes().decode("utf-8") if target.is_file() else None
        if current == text:
            continue
        if args.check:
            stale.append(name)
        else:
            target.write_bytes(text.encode("utf-8"))
            print(f"wrote {target.relative_to(FIXTURES.parent.parent.parent)}")
    if stale:
        print(f"{OUTPUT} missing or stale in: {', '.join(stale)}", file=sys.stderr)
        print("run: python scripts/gen_cached_metadata.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
