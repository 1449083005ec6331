"""The notes' relations, read from what the index already holds (no second copy on disk):
links written in a note (`[[…]]`, `[text](x.md)`), canvas edges (a canvas's units say
`→ [[target]]`, `sources/canvas.py`), embeds (the manifest's dependencies), tags, backlinks
(the links turned round), and the code names a note writes (`UObject::BeginDestroy`,
`` `gil_scoped_release` ``) for the links into the code (`mentions.py`).

Built from the manifest's units once per index change (`Manifest.change_token`) and kept in
memory, a few indexes at a time."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from vault_rag.index.vault_index import VaultIndex
from vault_rag.vault.links import link_paths

LINK, EMBED, CANVAS = "link", "embed", "canvas"
_CACHED = 4
# `` `A::f` ``, `` `f()` ``, `` `obj.method` `` (a backticked identifier); `A::f` in prose.
_BACKTICKED = re.compile(r"`([A-Za-z_~][\w~]*(?:(?:::|\.|->)~?[A-Za-z_]\w*)*)(?:\([^`\n]*\))?`")
_QUALIFIED = re.compile(r"(?<![\w:])([A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)+)")
MIN_BARE_NAME = 3  # a backticked single word shorter than this is never a symbol


@dataclass
class NoteGraph:
    out: dict[str, dict[str, str]] = field(default_factory=dict)  # note → target → kind
    back: dict[str, dict[str, str]] = field(default_factory=dict)  # target → note → kind
    tags: dict[str, set[str]] = field(default_factory=dict)
    mentions: dict[str, set[str]] = field(default_factory=dict)  # note → code names
    by_name: dict[str, set[tuple[str, str]]] = field(
        default_factory=dict
    )  # last part → (note, name)


_cache: OrderedDict[tuple[Path, tuple[int, int]], NoteGraph] = OrderedDict()
_cache_lock = threading.Lock()


def note_graph(index: VaultIndex) -> NoteGraph:
    """The graph of the notes `index` holds now (built once per change of the index)."""
    key = (index.data_dir, index.manifest.change_token())
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    graph = build_note_graph(index)
    with _cache_lock:
        _cache[key] = graph
        while len(_cache) > _CACHED:
            _cache.popitem(last=False)
    return graph


def build_note_graph(index: VaultIndex) -> NoteGraph:
    manifest = index.manifest
    notes = index.note_names.current()
    graph = NoteGraph()
    out: dict[str, dict[str, str]] = defaultdict(dict)
    tags: dict[str, set[str]] = defaultdict(set)
    mentions: dict[str, set[str]] = defaultdict(set)
    chunks = manifest.chunks(manifest.chunk_ids())
    for chunk in chunks.values():
        note = chunk.note_path
        tags[note].update(t.lstrip("#") for t in chunk.tags)
        if chunk.origin and chunk.origin != note:
            continue  # embedded text: its links and names are the embedded note's
        if chunk.extra.get("kind") == "code":
            continue  # (a vault's own code files: not notes naming code)
        kind = CANVAS if note.lower().endswith(".canvas") else LINK
        for linkpath in link_paths(chunk.text):
            target = notes.resolve(linkpath, note)
            if target is not None and target != note:
                out[note].setdefault(target, kind)
        mentions[note].update(code_names(chunk.text))
    for note in manifest.notes():
        for target in manifest.note_deps(note):
            if not target.startswith("missing:") and target != note:
                out[note][target] = EMBED
    graph.out = dict(out)
    back: dict[str, dict[str, str]] = defaultdict(dict)
    for note, targets in out.items():
        for target, kind in targets.items():
            back[target][note] = kind
    graph.back = dict(back)
    graph.tags = {n: t for n, t in tags.items() if t}
    graph.mentions = {n: m for n, m in mentions.items() if m}
    by_name: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for note, names in graph.mentions.items():
        for name in names:
            by_name[last_name(name)].add((note, name))
    graph.by_name = dict(by_name)
    return graph


def code_names(text: str) -> set[str]:
    """The code names a passage writes: backticked identifiers and `A::b` qualified names."""
    found = {m.group(1).replace("->", ".") for m in _BACKTICKED.finditer(text)}
    found.update(m.group(1) for m in _QUALIFIED.finditer(text))
    return {n for n in found if "::" in n or "." in n or len(n) >= MIN_BARE_NAME}


def last_name(name: str) -> str:
    for separator in ("::", "."):
        name = name.rsplit(separator, 1)[-1]
    return name
