"""Which sources sit beside the vault, and whether each may be indexed.

A source is declared in the settings (`sources`) or added with `vault-rag sources add` (kept in
`sources.json` in the vault's data dir, like the plugin's excluded folders). Each is checked
before it is read, with a sentence that says what to do: a path that is missing, not a folder
or unreadable; a path inside the vault or holding it; a path overlapping another source; a
symlink loop at the root. A bad source is reported and skipped: the others and the vault are
indexed, and its data is kept until it is removed.

What a source's walk leaves out (`path_rules`): what its `.gitignore` files say (the root's and
every nested one, as git reads them), the source's own `exclude` (gitignore-style) and, when
`include` is given, every file it does not match; for
`code`, build output, vendored and generated folders (`CODE_SKIPS`: Unreal's `Binaries/`,
`Intermediate/`, `DerivedDataCache/`, `Saved/`, …). Symlinked folders are never walked into
(`vault/listing.py`), so a symlink loop inside a source ends no walk.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pathspec
from pydantic import TypeAdapter, ValidationError

from vault_rag.settings import Settings, SourceSpec
from vault_rag.sources.web.state import MIRROR_DIR
from vault_rag.sources.web.urls import WebUrlError, check_start_url
from vault_rag.storage.private_files import private_dir

VAULT = "vault"  # the vault's own collection name
ADDED_FILE = "sources.json"
SOURCES_DIR = "sources"
CODE_SKIPS = (
    "Binaries/",
    "Intermediate/",
    "DerivedDataCache/",
    "Saved/",
    "ThirdParty/",
    "third_party/",
    "vendor/",
    "node_modules/",
    "__pycache__/",
    "build/",
    "dist/",
    "target/",
    "*.min.js",
    "*.generated.h",
    "*.gen.cpp",
)
_LIST = TypeAdapter(list[SourceSpec])


class SourceError(ValueError):
    """A source that cannot be indexed, or a `sources` command that cannot be done."""


def added_specs(data_dir: Path) -> list[SourceSpec]:
    """The sources added with `vault-rag sources add`."""
    file = data_dir / ADDED_FILE
    if not file.is_file():
        return []
    try:
        return _LIST.validate_json(file.read_bytes())
    except (OSError, ValidationError) as exc:
        raise SourceError(f"{file} cannot be read as a list of sources: {exc}") from exc


def save_added(data_dir: Path, specs: Iterable[SourceSpec]) -> None:
    data = [spec.model_dump(mode="json") for spec in specs]
    private_dir(data_dir)
    temporary = data_dir / (ADDED_FILE + ".tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, data_dir / ADDED_FILE)


def all_specs(settings: Settings, data_dir: Path) -> list[SourceSpec]:
    """The settings' sources, then the added ones; a name used twice is an error."""
    specs = [*settings.sources, *added_specs(data_dir)]
    seen: set[str] = set()
    for spec in specs:
        if spec.name == VAULT:
            raise SourceError(f"the name {VAULT!r} is the vault's own collection: choose another")
        if spec.name in seen:
            raise SourceError(f"two sources are named {spec.name!r}: names must differ")
        seen.add(spec.name)
    return specs


def source_data_dir(data_dir: Path, name: str) -> Path:
    return data_dir / SOURCES_DIR / name


def source_root(spec: SourceSpec, data_dir: Path) -> Path:
    """The folder a source's index reads: its own path, or for a web source the mirror of its
    pages in its data folder (`<data dir>/sources/<name>/pages/`, written by the crawl)."""
    if spec.kind == "web":
        return source_data_dir(data_dir, spec.name) / MIRROR_DIR
    assert spec.path is not None  # SourceSpec's validator
    return spec.path.expanduser()


def resolve_root(spec: SourceSpec, data_dir: Path | None = None) -> Path:
    """The source's folder, checked: it exists, is a folder and can be listed. A web source:
    its URL checked (http or https, no credentials), and its mirror folder (made when
    missing) when `data_dir` is given."""
    if spec.kind == "web":
        try:
            check_start_url(spec.url or "")
        except WebUrlError as exc:
            raise SourceError(f"source {spec.name!r}: {exc}") from exc
        if data_dir is None:
            return Path()
        mirror = source_root(spec, data_dir)
        private_dir(mirror.parent)
        mirror.mkdir(exist_ok=True)
        return mirror
    assert spec.path is not None
    path = spec.path.expanduser()
    try:
        root = path.resolve(strict=True)
    except RuntimeError as exc:  # Python 3.11: "Symlink loop from …"
        raise SourceError(f"source {spec.name!r}: {path} is a symlink loop ({exc})") from exc
    except FileNotFoundError as exc:
        raise SourceError(
            f"source {spec.name!r}: {path} does not exist; fix its path or remove it "
            f"(`vault-rag sources remove {spec.name}`)"
        ) from exc
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            raise SourceError(f"source {spec.name!r}: {path} is a symlink loop") from exc
        raise SourceError(f"source {spec.name!r}: {path} cannot be read ({exc})") from exc
    if not root.is_dir():
        raise SourceError(f"source {spec.name!r}: {root} is a file, not a folder")
    if not os.access(root, os.R_OK | os.X_OK):
        raise SourceError(f"source {spec.name!r}: {root} cannot be read (permission denied)")
    try:
        with os.scandir(root) as scan:
            next(scan, None)
    except OSError as exc:
        raise SourceError(f"source {spec.name!r}: {root} cannot be listed ({exc})") from exc
    return root


def check_specs(
    vault: Path, specs: list[SourceSpec], data_dir: Path | None = None
) -> dict[str, Path | SourceError]:
    """Each source's checked root, or the error that keeps it out: its own path's, or an
    overlap with the vault or an earlier source (the later of two overlapping sources is the
    one refused). A web source's root is its mirror folder in `data_dir` (never overlapping)."""
    vault_root = vault.expanduser().resolve()
    checked: dict[str, Path | SourceError] = {}
    roots: dict[str, Path] = {}
    for spec in specs:
        if spec.kind == "web":
            try:
                checked[spec.name] = resolve_root(spec, data_dir)
            except SourceError as exc:
                checked[spec.name] = exc
            continue
        try:
            root = resolve_root(spec)
            _refuse_overlap(spec.name, root, VAULT, vault_root)
            for other, other_root in roots.items():
                _refuse_overlap(spec.name, root, f"source {other!r}", other_root)
        except SourceError as exc:
            checked[spec.name] = exc
            continue
        roots[spec.name] = root
        checked[spec.name] = root
    return checked


def _refuse_overlap(name: str, root: Path, other: str, other_root: Path) -> None:
    if root == other_root or root.is_relative_to(other_root):
        where = "the vault" if other == VAULT else other
        raise SourceError(
            f"source {name!r}: {root} is inside {where} ({other_root}); its files would be "
            "indexed twice: choose a folder outside it"
        )
    if other_root.is_relative_to(root):
        where = "the vault" if other == VAULT else other
        raise SourceError(
            f"source {name!r}: {root} holds {where} ({other_root}); its files would be indexed "
            "twice: choose a folder beside it, or exclude that folder"
        )


def path_rules(spec: SourceSpec, root: Path) -> SourceRules:
    """skip(path, is_folder) for the source's walk (see the module doc)."""
    return SourceRules(spec, root)


def kept_by(spec: SourceSpec, root: Path) -> Callable[[str], bool]:
    """Whether the source's rules keep a file (`path_rules`), each path asked once: what the
    code graph serves from a source never comes from a file its rules leave out."""
    rules = path_rules(spec, root)
    cache: dict[str, bool] = {}

    def kept(path: str) -> bool:
        if path not in cache:
            cache[path] = rules(path, False) is None
        return cache[path]

    return kept


class SourceRules:
    """What a source's walk leaves out. Called as skip(path, is_folder): None keeps the entry,
    else a sentence saying why it is left out (the listing reports it: `vault-rag status`).

    Every `.gitignore` from the root down to the entry's folder applies, as git reads them: a
    deeper file's patterns are relative to its folder and win over the ones above (a `!`
    pattern there brings a file back). Each is read when first needed and again when its mtime
    changes. A folder left out is never walked into, so nothing under it is looked at."""

    def __init__(self, spec: SourceSpec, root: Path) -> None:
        self.root = root
        self.builtin = pathspec.GitIgnoreSpec.from_lines(
            list(CODE_SKIPS) if spec.kind == "code" else []
        )
        self.excluded = pathspec.GitIgnoreSpec.from_lines(spec.exclude)
        self.included = pathspec.GitIgnoreSpec.from_lines(spec.include) if spec.include else None
        # folder ("" = root) → (the .gitignore's mtime_ns, its patterns); None: there is none
        self._ignores: dict[str, tuple[int, pathspec.GitIgnoreSpec] | None] = {}

    def __call__(self, path: str, is_folder: bool) -> str | None:
        name = path + "/" if is_folder else path
        if self.builtin.match_file(name):
            return "a build, vendored or generated folder or file, never indexed in code sources"
        ignored: str | None = None
        folders = path.split("/")[:-1]
        for depth in range(len(folders) + 1):
            folder = "/".join(folders[:depth])
            rules = self._gitignore(folder)
            if rules is None:
                continue
            below = name[len(folder) + 1 :] if folder else name
            verdict = rules.check_file(below).include
            if verdict is not None:  # the deepest file that has a say decides
                where = f"{folder}/.gitignore" if folder else ".gitignore"
                ignored = f"ignored by {where}" if verdict else None
        if ignored:
            return ignored
        if self.excluded.match_file(name):
            return "matches the source's `exclude` patterns"
        if not is_folder and self.included is not None and not self.included.match_file(path):
            return "matches none of the source's `include` patterns"
        return None

    def _gitignore(self, folder: str) -> pathspec.GitIgnoreSpec | None:
        file = self.root / folder / ".gitignore" if folder else self.root / ".gitignore"
        try:
            mtime = file.stat().st_mtime_ns
        except OSError:
            self._ignores[folder] = None
            return None
        cached = self._ignores.get(folder)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        lines: list[str] = []
        with contextlib.suppress(OSError):
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        rules = pathspec.GitIgnoreSpec.from_lines(lines)
        self._ignores[folder] = (mtime, rules)
        return rules
