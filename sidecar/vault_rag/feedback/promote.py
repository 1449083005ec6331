"""Promote an answer: write it into the vault as a new note the user owns.

Guarantees:
- only inside the answers folder: the title becomes one safe file name (no separators, no
  characters Windows or Obsidian links reject, no control or invisible format characters, no
  leading dot, no reserved device name, bounded length); `folder` is a relative path that must
  stay under the answers folder (symlinks included), else `PromoteError`;
- never overwrites: the note is linked into place under a name that must not exist yet
  (`os.link` fails on an existing name, also on a case-insensitive file system; on Windows
  `os.rename` does the same), trying `Title.md`, `Title (2).md`, … , so two concurrent promotes
  of the same title both succeed under different names;
- atomic: the content is written and fsynced to a temp file (`.vault-rag-*.tmp`, not a note)
  in the same folder first, so a crash at any point leaves either no note or the whole note.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import re
import time
import unicodedata
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from vault_rag.feedback.answers import AnswerRecord, AnswerStore
from vault_rag.feedback.store import FeedbackStore
from vault_rag.storage.private_files import make_vault_dirs, vault_file_mode
from vault_rag.vault.paths import UnsafePathError, normalize_rel_path, resolve_inside

ORIGIN = "promoted"
TEMP_PREFIX = ".vault-rag-"
TEMP_SUFFIX = ".tmp"
MAX_TITLE_CHARS = 100
MAX_NAME_BYTES = 150  # leaves room for " (9999).md" and the 255-byte file name limit
MAX_COPIES = 9999
STALE_TEMP_SECONDS = 3600

# Not allowed in Windows file names (`<>:"/\|?*`) or breaking Obsidian links (`#^[]|`).
_FORBIDDEN = set('<>:"/\\|?*#^[]')
# Control, invisible-format (e.g. right-to-left override), surrogate and line/paragraph breaks.
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {
    f"{p}{n}" for p in ("COM", "LPT") for n in (*"123456789", "¹", "²", "³")
}
_LINK_UNSAFE = str.maketrans(dict.fromkeys("[]|#^", " "))
_NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK}


class PromoteError(ValueError):
    """The note cannot be written where asked (outside the answers folder, bad folder name)."""


def safe_name(raw: str, fallback: str = "Answer") -> str:
    """One file-name component from `raw` (a title or folder name), safe on every OS."""
    text = unicodedata.normalize("NFC", raw)
    cleaned = "".join(
        " " if ch in _FORBIDDEN or unicodedata.category(ch) in _UNSAFE_CATEGORIES else ch
        for ch in text
    )
    name = _strip(" ".join(cleaned.split())[:MAX_TITLE_CHARS])
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = _strip(name[:-1])
    if not name:
        return fallback
    # Windows reserves device names even with an extension ("CON.md", "con .txt.md").
    if name.split(".", 1)[0].rstrip(" ").upper() in _RESERVED:
        name = f"_{name}"
    return name


def _strip(name: str) -> str:
    # Leading dots hide a file (and `..` must never survive); Windows drops trailing dots/spaces.
    return name.strip(" .")


def default_title(question: str) -> str:
    first = next((line for line in question.splitlines() if line.strip()), "")
    return first.strip() or f"Answer {dt.date.today().isoformat()}"


def answers_dir(vault_root: Path, answers_folder: str, folder: str | None = None) -> Path:
    """The folder a promoted note goes to, created if needed; `PromoteError` unless it is inside
    the vault's answers folder. `folder` is relative to the answers folder (a path that starts
    with the answers folder itself is accepted too)."""
    root = vault_root.resolve()
    if not root.is_dir():
        raise PromoteError(f"the vault {str(vault_root)!r} is not a folder")
    try:
        base = normalize_rel_path(answers_folder)
    except UnsafePathError as exc:
        raise PromoteError(f"the answers folder must be a folder inside the vault: {exc}") from exc
    parts = base.split("/")
    if any(safe_name(p, fallback="") != p for p in parts):
        # e.g. ".obsidian": hidden folders are not indexed, and odd names break links
        raise PromoteError(f"the answers folder {answers_folder!r} is not a usable folder name")
    if folder is not None and folder.strip():
        try:
            extra = normalize_rel_path(folder).split("/")
        except UnsafePathError as exc:
            raise PromoteError(
                f"folder {folder!r} must be a relative path under {answers_folder!r}"
            ) from exc
        if extra[: len(parts)] == parts:
            extra = extra[len(parts) :]
        parts += [_folder_part(p, folder) for p in extra]
    rel = "/".join(parts)
    try:
        make_vault_dirs(resolve_inside(root, base))
        top = resolve_inside(root, base)  # resolved again: it may be a symlink into the vault
        # Checked before creating anything below it, and again after: a symlink may appear.
        _check_under(top, resolve_inside(root, rel), rel, answers_folder)
        make_vault_dirs(resolve_inside(root, rel))
        return _check_under(top, resolve_inside(root, rel), rel, answers_folder)
    except UnsafePathError as exc:
        raise PromoteError(f"{rel!r} leads outside the vault: {exc}") from exc


def _check_under(top: Path, target: Path, rel: str, answers_folder: str) -> Path:
    if target != top and top not in target.parents:
        raise PromoteError(f"{rel!r} leads outside the answers folder {answers_folder!r}")
    return target


def _folder_part(part: str, folder: str) -> str:
    name = safe_name(part, fallback="")
    if not name:
        raise PromoteError(f"folder {folder!r} has an unusable part {part!r}")
    return name


def note_link(note_path: str, anchor: str = "") -> str:
    """`[[note#anchor]]` for a vault-relative note path (without `.md`, as Obsidian links)."""
    target = note_path[:-3] if note_path.lower().endswith(".md") else note_path
    heading = " ".join(anchor.translate(_LINK_UNSAFE).split())
    return f"[[{target}#{heading}]]" if heading else f"[[{target}]]"


def source_links(citations: Iterable[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(`[[note#heading]]` links of the vault sources, urls of the web sources), no repeats."""
    links: dict[str, None] = {}
    urls: dict[str, None] = {}
    for c in citations:
        if c.get("kind") == "web" or (c.get("url") and not c.get("note_path")):
            if c.get("url"):
                urls[str(c["url"])] = None
        elif c.get("note_path"):
            # The anchor, not the heading path: only headings written in the note itself are
            # link targets (an embedded note's headings are not).
            links[note_link(str(c["note_path"]), str(c.get("anchor") or ""))] = None
    return list(links), list(urls)


def web_labels(citations: Iterable[dict[str, Any]]) -> dict[str, str]:
    """url → what its link shows: the page's title, then the cited section for a web source's
    page (`Installation › Troubleshooting`); the first citation of a URL names it."""
    labels: dict[str, str] = {}
    for c in citations:
        url = str(c.get("url") or "")
        if not url or url in labels or c.get("note_path"):
            continue
        title = " ".join(str(c.get("title") or "").split())
        section = " ".join(str(c.get("heading") or "").split(" > ")[-1].split())
        label = f"{title} › {section}" if title and section and section != title else title
        if label:
            labels[url] = label
    return labels


def web_link(url: str, label: str | None) -> str:
    """A list item linking `url`: `[label](<url>)` (the brackets keep a URL with parentheses or
    spaces whole), or `<url>` without a label."""
    if not label:
        return f"- <{url}>"
    text = re.sub(r"([\\\[\]])", r"\\\1", plain_text(label))
    return f"- [{text}](<{url}>)"


def plain_text(text: str) -> str:
    """`text` without control characters other than newline and tab: a NUL byte would make the
    note look binary to the indexer (and to Obsidian)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")


def render_note(answer: AnswerRecord, rating: int | None, when: dt.datetime) -> str:
    """The note's text: YAML frontmatter, the question, the answer and a sources section."""
    links, urls = source_links(answer.citations)
    question_text = plain_text(answer.question)
    frontmatter: dict[str, Any] = {
        "question": question_text,
        "date": when.date(),
        "model": answer.model,
        "rating": rating,
        "origin": ORIGIN,
        "answer_id": answer.answer_id,
        "sources": links,  # the dumper quotes `[[...]]`, which YAML would read as a list
    }
    if urls:
        frontmatter["web_sources"] = urls
    head = yaml.safe_dump(
        frontmatter, allow_unicode=True, sort_keys=False, default_flow_style=False, width=10**6
    )
    question = "\n".join(f"> {line}" for line in question_text.strip().splitlines())
    body = [f"> [!question]\n{question}" if question else "", plain_text(answer.answer).strip()]
    body.append("## Sources")
    labels = web_labels(answer.citations)
    sources = [f"- {link}" for link in links] + [web_link(url, labels.get(url)) for url in urls]
    body.append("\n".join(sources) or "_No sources were cited._")
    return f"---\n{head}---\n\n" + "\n\n".join(part for part in body if part) + "\n"


def promote_answer(
    vault_root: Path,
    answers_folder: str,
    answer: AnswerRecord,
    title: str | None = None,
    folder: str | None = None,
    *,
    rating: int | None = None,
    now: dt.datetime | None = None,
) -> Path:
    """Write `answer` as a new note under the answers folder; returns its absolute path. The
    note is indexed by the next indexer run (or the watcher) like any other note."""
    directory = answers_dir(vault_root, answers_folder, folder)
    stem = safe_name(title if title and title.strip() else default_title(answer.question))
    text = render_note(answer, rating, now or dt.datetime.now().astimezone())
    _sweep_stale_temps(directory)
    return write_new_note(directory, stem, text.encode("utf-8"))


def promote_by_id(
    data_dir: Path,
    vault_root: Path,
    answers_folder: str,
    answer_id: str,
    title: str | None = None,
    folder: str | None = None,
) -> Path:
    """`promote_answer` for a recorded answer, with its latest rating (`UnknownAnswerError`)."""
    with AnswerStore(data_dir) as answers:
        answer = answers.require(answer_id)
    with FeedbackStore(data_dir) as feedback:
        rating = feedback.latest_rating(answer_id)
    return promote_answer(vault_root, answers_folder, answer, title, folder, rating=rating)


def write_new_note(directory: Path, stem: str, content: bytes) -> Path:
    """Write `content` to a new `<stem>.md` (or `<stem> (n).md`) in `directory`, atomically and
    without replacing anything."""
    temp = directory / f"{TEMP_PREFIX}{uuid.uuid4().hex}{TEMP_SUFFIX}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
    try:
        if os.name == "posix":  # a note like any other, not private like the data dir
            os.fchmod(fd, vault_file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        path = _claim_name(directory, stem, temp)
    finally:
        temp.unlink(missing_ok=True)  # after a link the note keeps its own name
    _fsync_dir(directory)
    return path


def _claim_name(directory: Path, stem: str, temp: Path) -> Path:
    for n in range(1, MAX_COPIES + 1):
        target = directory / (f"{stem}.md" if n == 1 else f"{stem} ({n}).md")
        try:
            _place_no_replace(temp, target)
        except FileExistsError:
            continue
        return target
    raise PromoteError(f"more than {MAX_COPIES} notes are named {stem!r} already")


def _place_no_replace(temp: Path, target: Path) -> None:
    """Give the finished temp file the name `target`, raising FileExistsError when it exists."""
    if os.name == "nt":
        os.rename(temp, target)  # Windows' rename never replaces an existing file
        return
    try:
        os.link(temp, target)  # atomic, and never replaces: EEXIST if the name is taken
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        # No hard links on this file system (FAT, some shares): claim the name exclusively,
        # then swap the full content in. A crash in between leaves an empty note, never a
        # partial one, and never someone else's file replaced.
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        os.replace(temp, target)


def _fsync_dir(directory: Path) -> None:
    """Make the new directory entry durable (POSIX; Windows cannot open directories)."""
    if os.name == "nt":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sweep_stale_temps(directory: Path) -> None:
    """Remove temp files a crashed promote left behind (old enough to be nobody's work)."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    for entry in directory.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}"):
        try:
            if entry.stat().st_mtime < cutoff:
                entry.unlink()
        except OSError:
            continue
