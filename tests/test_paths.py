"""Vault-relative paths: one canonical form, and no way out of the vault."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_rag.vault.paths import UnsafePathError, normalize_rel_path, resolve_inside, to_rel_path

NFD_NAME = unicodedata.normalize("NFD", "Café 笔记.md")
NFC_NAME = unicodedata.normalize("NFC", "Café 笔记.md")

# ---------------------------------------------------------------------- normalize_rel_path


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("note.md", "note.md"),
        ("Gameplay/Actor 生命周期.md", "Gameplay/Actor 生命周期.md"),
        ("Gameplay\\Actor.md", "Gameplay/Actor.md"),  # Windows separators
        ("a\\b/c\\d.md", "a/b/c/d.md"),
        ("./a/./b.md", "a/b.md"),
        ("a//b.md", "a/b.md"),
        ("a/b/", "a/b"),
        ("C++/UObject 与 GC.md", "C++/UObject 与 GC.md"),
        ("...md", "...md"),  # dots inside a name are not a parent reference
        ("a/..b/c..md", "a/..b/c..md"),
        ("~/x.md", "~/x.md"),  # no home expansion: "~" is just a folder name
    ],
)
def test_normalize_accepts_and_canonicalises(raw: str, expected: str) -> None:
    assert normalize_rel_path(raw) == expected


def test_normalize_turns_nfd_into_nfc() -> None:
    # macOS file systems hand out decomposed names; the index must have one spelling.
    assert NFD_NAME != NFC_NAME
    out = normalize_rel_path(f"Daily/{NFD_NAME}")
    assert out == f"Daily/{NFC_NAME}"
    assert unicodedata.is_normalized("NFC", out)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        ".",
        "./",
        "./.",
        "a\x00b.md",  # NUL byte
        "\x00",
        "../outside.md",
        "..",
        "a/../b.md",  # refused even though it would stay inside: no `..` at all
        "a/..",
        "a/b/../../..",
        "..\\outside.md",  # backslash form of ..
        "a\\..\\..\\x.md",
        "/etc/passwd",
        "/",
        "//server/share/x.md",
        "\\\\server\\share\\x.md",  # UNC path
        "\\x.md",  # root of the current drive on Windows
        "C:/Windows/win.ini",
        "C:\\Windows\\win.ini",
        "c:relative.md",  # drive-relative on Windows
        "C:",
        "./C:/Windows/win.ini",  # a `.` prefix must not hide the drive letter
        ".\\D:\\x.md",
    ],
)
def test_normalize_refuses_unsafe_paths(raw: str) -> None:
    with pytest.raises(UnsafePathError):
        normalize_rel_path(raw)


def test_unsafe_path_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        normalize_rel_path("../x")


_PIECES = st.sampled_from(
    ["a", "b.md", ".", "..", "/", "\\", ":", "C:", " ", "~", "e\u0301", "é", "中", "\x00", "#"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=8).map("".join))
def test_normalize_output_is_canonical_and_safe(raw: str) -> None:
    try:
        out = normalize_rel_path(raw)
    except UnsafePathError:
        return
    parts = out.split("/")
    assert normalize_rel_path(out) == out  # idempotent
    assert unicodedata.is_normalized("NFC", out)
    assert "\\" not in out and "\x00" not in out
    assert not out.startswith("/")
    assert not any(p in ("", ".", "..") for p in parts)
    assert not (len(parts[0]) > 1 and parts[0][1] == ":")


# ---------------------------------------------------------------------- resolve_inside


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Gameplay").mkdir(parents=True)
    (root / "Gameplay" / "Actor.md").write_text("# Actor\n", encoding="utf-8")
    (root / "note.md").write_text("hello\n", encoding="utf-8")
    (tmp_path / "secret.md").write_text("outside\n", encoding="utf-8")
    (tmp_path / "outside_dir").mkdir()
    (tmp_path / "outside_dir" / "x.md").write_text("outside\n", encoding="utf-8")
    return root


def test_resolve_inside_returns_the_file(vault: Path) -> None:
    assert resolve_inside(vault, "Gameplay/Actor.md") == (vault / "Gameplay" / "Actor.md").resolve()
    assert resolve_inside(vault, "Gameplay\\Actor.md") == (vault / "Gameplay/Actor.md").resolve()
    # a path that does not exist yet is still a valid place inside the vault
    assert resolve_inside(vault, "new/Note.md") == vault.resolve() / "new" / "Note.md"


@pytest.mark.parametrize("raw", ["../secret.md", "/etc/passwd", "C:/x.md", "a\x00.md", ""])
def test_resolve_inside_refuses_unsafe_input(vault: Path, raw: str) -> None:
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, raw)


def test_resolve_inside_refuses_absolute_path_into_the_vault(vault: Path) -> None:
    # Even an absolute path that happens to point inside the vault is not a vault path.
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, str(vault / "note.md"))


def test_resolve_inside_refuses_symlinked_file_escape(vault: Path) -> None:
    (vault / "link.md").symlink_to(vault.parent / "secret.md")
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, "link.md")


def test_resolve_inside_refuses_symlinked_folder_escape(vault: Path) -> None:
    (vault / "Shared").symlink_to(vault.parent / "outside_dir", target_is_directory=True)
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, "Shared/x.md")
    # also for a file that does not exist behind the link
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, "Shared/new.md")


def test_resolve_inside_refuses_symlink_to_the_parent(vault: Path) -> None:
    (vault / "up").symlink_to(vault.parent, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, "up/secret.md")


def test_resolve_inside_allows_symlink_within_the_vault(vault: Path) -> None:
    (vault / "alias.md").symlink_to(vault / "note.md")
    assert resolve_inside(vault, "alias.md") == (vault / "note.md").resolve()


def test_resolve_inside_works_when_the_vault_root_is_a_symlink(vault: Path, tmp_path: Path) -> None:
    link_root = tmp_path / "vault-link"
    link_root.symlink_to(vault, target_is_directory=True)
    assert resolve_inside(link_root, "note.md") == (vault / "note.md").resolve()


def test_resolve_inside_finds_nfd_names_on_disk(vault: Path) -> None:
    # A vault synced from macOS can hold NFD names on Linux while vault paths are always NFC.
    folder = unicodedata.normalize("NFD", "Éditeur")
    (vault / folder).mkdir()
    (vault / folder / NFD_NAME).write_text("x\n", encoding="utf-8")
    rel = normalize_rel_path(f"{folder}/{NFD_NAME}")
    resolved = resolve_inside(vault, rel)
    assert resolved.is_file()
    assert resolved.read_text(encoding="utf-8") == "x\n"


# ---------------------------------------------------------------------- to_rel_path


def test_to_rel_path_is_canonical(vault: Path) -> None:
    assert to_rel_path(vault, vault / "Gameplay" / "Actor.md") == "Gameplay/Actor.md"
    assert to_rel_path(vault, vault / "Daily" / NFD_NAME) == f"Daily/{NFC_NAME}"


def test_to_rel_path_refuses_paths_outside_the_root(vault: Path) -> None:
    with pytest.raises(ValueError):
        to_rel_path(vault, vault.parent / "secret.md")


def test_to_rel_path_of_root_itself_is_refused(vault: Path) -> None:
    with pytest.raises(UnsafePathError):
        to_rel_path(vault, vault)
