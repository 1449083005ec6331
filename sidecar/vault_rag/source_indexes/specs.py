"""Which sources sit beside the vault, and whether each may be indexed.

A source is declared in the settings (`sources`) or added with `vault-rag sources add` (kept in
`sources.json` in the vault's data dir, like the plugin's excluded folders). Each is checked
before it is read, with a sentence that says what to do: a path that is missing, not a folder
or unreadable; a path inside the vault or holding it; a path overlapping another source; a
symlink loop at the root. A bad source is reported and skipped: the others and the vault are
indexed, and its data is kept until it is removed.

What a source's walk leaves out (`path_rules`): the root `.gitignore`, the source's own
`exclude` (gitignore-style) and, when `include` is given, every file it does not match; for
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
from vault_rag.storage.private_files import private_dir

VAULT = "vault"  # the vault's own collection name
ADDED_FILE = "sources.json"
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


def resolve_root(spec: SourceSpec) -> Path:
    """The source's folder, checked: it exists, is a folder and can be listed."""
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


def check_specs(vault: Path, specs: list[SourceSpec]) -> dict[str, Path | SourceError]:
    """Each source's checked root, or the error that keeps it out: its own path's, or an
    overlap with the vault or an earlier source (the later of two overlapping sources is the
    one refused)."""
    vault_root = vault.expanduser().resolve()
    checked: dict[str, Path | SourceError] = {}
    roots: dict[str, Path] = {}
    for spec in specs:
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


def path_rules(spec: SourceSpec, root: Path) -> Callable[[str, bool], bool]:
    """skip(path, is_folder) for the source's walk (see the module doc)."""
    lines: list[str] = list(CODE_SKIPS) if spec.kind == "code" else []
    gitignore = root / ".gitignore"
    if gitignore.is_file():
        with contextlib.suppress(OSError):
            lines += gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    lines += spec.exclude
    ignored = pathspec.GitIgnoreSpec.from_lines(lines)
    included = pathspec.GitIgnoreSpec.from_lines(spec.include) if spec.include else None

    def skip(path: str, is_folder: bool) -> bool:
        if ignored.match_file(path + "/" if is_folder else path):
            return True
        return not is_folder and included is not None and not included.match_file(path)

    return skip
