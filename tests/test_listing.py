"""VaultListing: the vault's note paths, re-listed only where a folder changed — always the
same paths as a full walk (the os.walk implementation it replaced is kept here as the oracle)."""

from __future__ import annotations

import os
import random
import unicodedata
from collections.abc import Iterable
from pathlib import Path

import pytest

from vault_rag.vault import listing
from vault_rag.vault.listing import VaultListing, iter_note_paths
from vault_rag.vault.paths import to_rel_path
from vault_rag.vault.reader import DEFAULT_IGNORES, is_ignored


def full_walk(vault_root: Path, ignores: Iterable[str] = DEFAULT_IGNORES) -> list[str]:
    """`iter_note_paths` as it was before the listing (os.walk), verbatim."""
    root = vault_root.resolve()
    ignores = tuple(ignores)
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".")
            and not is_ignored(to_rel_path(root, Path(dirpath) / d) + "/x", ignores)
        )
        for name in filenames:
            if not name.lower().endswith(".md"):
                continue
            absolute = Path(dirpath) / name
            if absolute.is_symlink():
                continue
            rel = to_rel_path(root, absolute)
            if not is_ignored(rel, ignores):
                found.append(rel)
    return sorted(found)


def write(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel in (
        "a.md",
        "B.MD",
        "notes.txt",
        "Folder/one.md",
        "Folder/Deep/er/two.md",
        "Daily/2024-01-01.md",
        "Gameplay/Daily/x.md",
        ".obsidian/workspace.md",
        ".hidden/h.md",
        "Folder/.dot/d.md",
        "Private/secret.md",
        unicodedata.normalize("NFD", "Café/crème.md"),
    ):
        write(root / rel)
    outside = tmp_path / "outside"
    write(outside / "o.md")
    (root / "link-dir").symlink_to(outside, target_is_directory=True)
    (root / "link.md").symlink_to(outside / "o.md")
    (root / "broken.md").symlink_to(tmp_path / "nowhere.md")
    (root / "Folder" / "dir.md").mkdir()  # a folder named like a note
    write(root / "Folder" / "dir.md" / "inner.md")
    return root


@pytest.mark.parametrize(
    "ignores",
    [
        DEFAULT_IGNORES,
        ("Private",),
        ("/Daily", "*.txt"),
        ("/Folder/one.md", "*/er/*", "b.md"),
        ("/*/two.md", "Folder/Deep", "/Café"),
        (),
    ],
)
def test_same_paths_as_a_full_walk(vault: Path, ignores: tuple[str, ...]) -> None:
    expected = full_walk(vault, ignores)
    assert VaultListing(vault, ignores).paths() == expected
    assert list(iter_note_paths(vault, ignores)) == expected
    assert "link.md" not in expected  # no symlinks
    if not ignores:
        assert "Café/crème.md" in expected  # NFC, from an NFD name on disk


def test_same_paths_on_the_sample_and_shared_vaults() -> None:
    from vault_rag.serving.sample import sample_vault_path

    roots = [sample_vault_path()]
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "vaults"
    if shared.is_dir():
        roots += sorted(p for p in shared.iterdir() if p.is_dir())
    for root in roots:
        assert VaultListing(root).paths() == full_walk(root), root


def test_changes_are_seen_and_unchanged_folders_are_not_listed_again(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every folder trusted (no racy window), a second call lists only folders whose
    mtime moved; after each kind of change the paths are a full walk's."""
    monkeypatch.setattr(listing, "RACY_NS", -1)
    ix = VaultListing(vault, ("Private",))
    assert ix.paths() == full_walk(vault, ("Private",))
    version = ix.version
    listed: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(
        listing.os, "scandir", lambda p: (listed.append(str(p)), real_scandir(p))[1]
    )

    def check() -> list[str]:
        """The listing equals a full walk; returns the folders the listing read."""
        expected = full_walk(vault, ("Private",))  # (os.walk reads every folder itself)
        listed.clear()
        assert ix.paths() == expected
        return list(listed)

    assert check() == []
    assert ix.version == version  # nothing changed: the same listing

    rng = random.Random(5)
    changes = [
        lambda: write(vault / "Folder" / "Deep" / "new.md"),
        lambda: (vault / "Folder" / "one.md").unlink(),
        lambda: (vault / "a.md").rename(vault / "Folder" / "a-moved.md"),
        lambda: (vault / "Folder" / "Deep").rename(vault / "Deep2"),
        lambda: write(vault / "Fresh" / "Sub" / "n.md"),
        lambda: write(vault / "Private" / "still-ignored.md"),
        lambda: write(vault / ".obsidian" / "x.md"),
        lambda: (vault / "Deep2" / "er" / "two.md").write_text(
            "new content"
        ),  # not a listing change
    ]
    for change in changes:
        change()
        assert len(check()) <= 4  # the folders that moved, and those at a new path
    for _ in range(30):  # random creates and deletes anywhere
        folders = [p for p in vault.rglob("*") if p.is_dir() and not p.is_symlink()]
        target = rng.choice(folders)
        notes = list(target.glob("*.md"))
        if notes and rng.random() < 0.4 and notes[0].is_file() and not notes[0].is_symlink():
            notes[0].unlink()
        else:
            write(target / f"r{rng.randrange(10_000)}.md")
        assert len(check()) <= 1  # (0: a hidden or ignored folder)


def test_folders_changed_just_now_are_listed_again(vault: Path) -> None:
    """Within the racy window a folder is never trusted, so a change that keeps its mtime
    (a coarse clock) is still seen."""
    ix = VaultListing(vault)
    before = ix.paths()
    folder = vault / "Folder"
    mtime = folder.stat().st_mtime_ns
    write(folder / "same-tick.md")
    os.utime(folder, ns=(mtime, mtime))  # the mtime did not move
    assert ix.paths() == sorted([*before, "Folder/same-tick.md"])


def test_unreadable_and_vanished_folders_are_skipped(vault: Path) -> None:
    ix = VaultListing(vault)
    ix.paths()
    for path in sorted((vault / "Folder" / "Deep").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (vault / "Folder" / "Deep").rmdir()
    assert ix.paths() == full_walk(vault)
    if os.geteuid() != 0:  # root reads any folder
        (vault / "Daily").chmod(0)
        try:
            assert ix.paths() == full_walk(vault)
        finally:
            (vault / "Daily").chmod(0o755)
