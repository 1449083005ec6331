"""NoteIndex: wikilink resolution with Obsidian's getFirstLinkpathDest rules."""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

import pytest

from vault_rag.vault.links import NoteIndex, file_extension, is_note_link, parse_link

PATHS = [
    "Inbox.md",
    "Notes/Topic.md",
    "Archive/Old/Topic.md",
    "Work/Meeting.md",
    "Home/Meeting.md",
    "Projects/Alpha/Spec.md",
    "Spec.md",
    "Projects/Shared.md",
    "Other/Shared.md",
    "Folder/Note.md",
    "v1.2 Release.md",
    "My.Notes.md",
    "引擎/UE5 材质系统.md",
    "attachments/photo.png",  # not a note: ignored by the index
]


@pytest.fixture
def index() -> NoteIndex:
    return NoteIndex(PATHS)


def test_only_markdown_paths_are_indexed(index: NoteIndex) -> None:
    assert len(index) == len(PATHS) - 1
    assert "attachments/photo.png" not in index
    assert "notes/topic.md" in index  # membership is case-insensitive


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("Notes/Topic", "Notes/Topic.md"),
        ("Notes/Topic.md", "Notes/Topic.md"),
        ("Archive/Old/Topic", "Archive/Old/Topic.md"),
        ("Old/Topic", "Archive/Old/Topic.md"),  # path suffix
        ("Inbox", "Inbox.md"),
        ("inbox", "Inbox.md"),
        ("NOTES/TOPIC", "Notes/Topic.md"),
        ("UE5 材质系统", "引擎/UE5 材质系统.md"),
        ("v1.2 Release", "v1.2 Release.md"),
        ("My.Notes", "My.Notes.md"),
        ("/Notes/Topic", "Notes/Topic.md"),
    ],
)
def test_resolve_from_root(index: NoteIndex, link: str, expected: str) -> None:
    assert index.resolve(link, "Inbox.md") == expected


def test_bare_name_prefers_shortest_path_then_alphabetical(index: NoteIndex) -> None:
    assert index.resolve("Topic", "Inbox.md") == "Notes/Topic.md"
    # Same length: alphabetical, whatever order the paths came in.
    for seed in range(5):
        shuffled = PATHS[:]
        random.Random(seed).shuffle(shuffled)
        assert NoteIndex(shuffled).resolve("Meeting", "Inbox.md") == "Home/Meeting.md"


def test_bare_name_prefers_the_source_folder(index: NoteIndex) -> None:
    assert index.resolve("Meeting", "Work/Today.md") == "Work/Meeting.md"
    assert index.resolve("Meeting", "Work/Sub/Deep.md") == "Home/Meeting.md"  # not inside Work/Sub
    assert index.resolve("Meeting", "Home/x.md") == "Home/Meeting.md"


def test_exact_vault_path_beats_the_source_folder(index: NoteIndex) -> None:
    # `Spec` is also the exact path of the root note Spec.md, which Obsidian checks first.
    assert index.resolve("Spec", "Projects/Alpha/Host.md") == "Spec.md"
    assert index.resolve("./Spec", "Projects/Alpha/Host.md") == "Projects/Alpha/Spec.md"
    assert index.resolve("Alpha/Spec", "Projects/Alpha/Host.md") == "Projects/Alpha/Spec.md"


def test_relative_links(index: NoteIndex) -> None:
    assert index.resolve("../Shared", "Projects/Alpha/Host.md") == "Projects/Shared.md"
    assert index.resolve("./../Shared", "Projects/Alpha/Host.md") == "Projects/Shared.md"
    assert index.resolve("../../Inbox", "Projects/Alpha/Host.md") == "Inbox.md"
    # The parent folder gets no preference for a bare name: shortest path wins.
    assert index.resolve("Shared", "Projects/Alpha/Host.md") == "Other/Shared.md"


def test_leading_slash_allows_only_the_exact_path(index: NoteIndex) -> None:
    assert index.resolve("/Topic", "Inbox.md") is None
    assert index.resolve("/Inbox", "Notes/Topic.md") == "Inbox.md"


def test_folder_parts_respect_slash_boundaries() -> None:
    index = NoteIndex(["Folder/Note.md", "Foo/N.md", "A/N.md"])
    assert index.resolve("der/Note", "x.md") is None  # not a suffix at a folder boundary
    assert index.resolve("older/Note", "x.md") is None
    # Source folder `Fo` does not contain `Foo/`: shortest path wins.
    assert index.resolve("N", "Fo/x.md") == "A/N.md"


def test_wrong_folder_is_missing(index: NoteIndex) -> None:
    assert index.resolve("Elsewhere/Topic", "Inbox.md") is None
    assert index.resolve("Nope", "Inbox.md") is None


def test_empty_link_is_the_source_note(index: NoteIndex) -> None:
    assert index.resolve("", "Notes/Topic.md") == "Notes/Topic.md"
    assert index.resolve("  ", "notes/topic.md") == "Notes/Topic.md"
    assert index.resolve("", "Not/Indexed.md") is None


def test_unicode_normalisation() -> None:
    nfd = unicodedata.normalize("NFD", "Café/Résumé.md")
    index = NoteIndex([nfd])
    assert index.paths == [unicodedata.normalize("NFC", "Café/Résumé.md")]
    assert index.resolve("Résumé", "x.md") == "Café/Résumé.md"
    assert index.resolve(unicodedata.normalize("NFD", "café/résumé"), "x.md") == "Café/Résumé.md"


def test_non_markdown_targets_are_not_notes(index: NoteIndex) -> None:
    for link in ("photo.png", "attachments/photo.png", "doc.pdf", "Board.canvas", "a.MP3"):
        assert index.resolve(link, "Inbox.md") is None
        assert not is_note_link(link)
    for link in ("Inbox", "Inbox.md", "v1.2 Release", "Dr. Who", "Missing"):
        assert is_note_link(link)
    assert file_extension("Board.canvas") == "canvas"
    assert file_extension("v1.2") is None
    assert file_extension("Dr. Who") is None


def test_resolve_all_orders_candidates(index: NoteIndex) -> None:
    assert index.resolve_all("Topic", "Inbox.md") == ["Notes/Topic.md", "Archive/Old/Topic.md"]
    assert index.resolve_all("Topic", "Archive/Old/x.md") == [
        "Archive/Old/Topic.md",
        "Notes/Topic.md",
    ]


def test_with_path_adds_an_unsaved_note(index: NoteIndex) -> None:
    bigger = index.with_path("Drafts/New.md")
    assert bigger.resolve("New", "Inbox.md") == "Drafts/New.md"
    assert "Drafts/New.md" not in index
    assert index.with_path("Inbox.md") is index


def test_parse_link() -> None:
    assert parse_link("Note#A#B|alias") == ("Note", ["A", "B"])
    assert parse_link("Note|alias#x") == ("Note", [])
    assert parse_link(" Note #^id") == ("Note", ["^id"])
    assert parse_link("#Heading") == ("", ["Heading"])
    assert parse_link("Note##A#") == ("Note", ["A"])
    assert parse_link("Note\\|alias") == ("Note", [])  # `\|` inside tables


def test_from_vault_skips_ignored_folders_and_other_files(tmp_path: Path) -> None:
    for rel in ("A.md", "Sub/B.md", ".obsidian/C.md", ".trash/D.md", "img.png", "Sub/E.MD"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")
    index = NoteIndex.from_vault(tmp_path)
    assert index.paths == ["A.md", "Sub/B.md", "Sub/E.MD"]
    assert index.resolve("C", "A.md") is None
    assert index.resolve("e", "A.md") == "Sub/E.MD"
