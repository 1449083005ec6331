"""Reading notes defensively (reader.py) and splitting frontmatter (frontmatter.py)."""

from __future__ import annotations

import datetime
import os
import threading
import unicodedata
from pathlib import Path

import pytest

from vault_rag.vault.frontmatter import as_string_list, split_frontmatter
from vault_rag.vault.listing import iter_note_paths
from vault_rag.vault.paths import UnsafePathError
from vault_rag.vault.reader import (
    DEFAULT_IGNORES,
    MAX_NOTE_BYTES,
    NoteSource,
    decode_note_bytes,
    is_ignored,
    read_note,
)
from vault_rag.vault.types import WARNING_CODES


def codes(source: NoteSource) -> list[str]:
    return [w.code for w in source.warnings]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


def write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------------- decode_note_bytes


def test_plain_utf8_note_has_no_warnings() -> None:
    src = decode_note_bytes("a.md", "# 标题\n\nBeginPlay 之前\n".encode())
    assert src == NoteSource("a.md", text="# 标题\n\nBeginPlay 之前\n")


def test_invalid_utf8_keeps_readable_text_with_replacement_chars() -> None:
    data = "开头 ok ".encode() + b"\xff\xfe\xc3" + " 结尾 end\n".encode()
    src = decode_note_bytes("bad.md", data)
    assert not src.skipped
    assert codes(src) == ["invalid_utf8"]
    assert src.text.startswith("开头 ok ")
    assert src.text.endswith(" 结尾 end\n")
    assert "\ufffd" in src.text
    warning = src.warnings[0]
    assert warning.note == "bad.md"
    assert "byte 10" in warning.message  # offset of the first bad byte: "开头 ok " is 10 bytes


def test_truncated_multibyte_sequence_at_end_is_invalid_utf8() -> None:
    data = "中文".encode()[:-1]
    src = decode_note_bytes("t.md", data)
    assert codes(src) == ["invalid_utf8"]
    assert src.text == "中\ufffd"


def test_nul_bytes_mean_binary_and_the_note_is_skipped() -> None:
    src = decode_note_bytes("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert src.skipped
    assert codes(src) == ["binary"]
    assert src.text == ""


def test_binary_check_only_looks_at_the_first_8_kib() -> None:
    # Same heuristic as git: a NUL far into a long text file does not make it binary.
    data = b"a" * 8192 + b"\x00tail"
    src = decode_note_bytes("late-nul.md", data)
    assert not src.skipped
    assert "binary" not in codes(src)


def test_oversized_bytes_are_skipped_as_too_large() -> None:
    src = decode_note_bytes("big.md", b"x" * 11, max_bytes=10)
    assert src.skipped
    assert codes(src) == ["too_large"]
    assert decode_note_bytes("ok.md", b"x" * 10, max_bytes=10).skipped is False


@pytest.mark.parametrize("data", [b"", b"   \n\t\n", b"\xef\xbb\xbf", b"\r\n\r\n"])
def test_empty_or_whitespace_note_is_kept_with_empty_warning(data: bytes) -> None:
    src = decode_note_bytes("empty.md", data)
    assert not src.skipped
    assert codes(src) == ["empty"]


def test_bom_is_stripped() -> None:
    src = decode_note_bytes("bom.md", b"\xef\xbb\xbf---\ntags: [a]\n---\nbody\n")
    assert src.text == "---\ntags: [a]\n---\nbody\n"
    assert not src.text.startswith("\ufeff")
    assert src.warnings == []
    # ...so frontmatter detection, which needs `---` on the very first line, still works
    assert split_frontmatter(src.text)[0] == {"tags": ["a"]}


def test_only_a_leading_bom_is_stripped() -> None:
    src = decode_note_bytes("bom.md", "a\ufeffb".encode())
    assert src.text == "a\ufeffb"


def test_crlf_and_lone_cr_are_normalised_to_lf() -> None:
    src = decode_note_bytes("win.md", b"line1\r\nline2\rline3\n\r\nend")
    assert src.text == "line1\nline2\nline3\n\nend"
    assert "\r" not in src.text


def test_every_warning_code_used_is_known() -> None:
    samples = [
        decode_note_bytes("a.md", b"\xff"),
        decode_note_bytes("a.md", b"\x00"),
        decode_note_bytes("a.md", b"xx", max_bytes=1),
        decode_note_bytes("a.md", b""),
    ]
    assert {c for s in samples for c in codes(s)} <= WARNING_CODES


# ---------------------------------------------------------------------- read_note


def test_read_note_reads_and_normalises(vault: Path) -> None:
    write(vault, "Gameplay/Actor.md", b"\xef\xbb\xbf# Actor\r\n\r\nBeginPlay\r\n")
    src = read_note(vault, "Gameplay\\Actor.md")
    assert src.text == "# Actor\n\nBeginPlay\n"
    assert src.path == "Gameplay\\Actor.md"  # reported as the caller spelled it
    assert src.warnings == []


def test_read_note_invalid_utf8(vault: Path) -> None:
    write(vault, "bad.md", b"ok \xe4\xb8 then more text\n")
    src = read_note(vault, "bad.md")
    assert codes(src) == ["invalid_utf8"]
    assert src.text.startswith("ok \ufffd")
    assert src.text.endswith("then more text\n")


def test_read_note_binary_with_md_name(vault: Path) -> None:
    write(vault, "photo.md", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01")
    src = read_note(vault, "photo.md")
    assert src.skipped
    assert codes(src) == ["binary"]


def test_read_note_empty_file(vault: Path) -> None:
    write(vault, "empty.md", b"")
    src = read_note(vault, "empty.md")
    assert not src.skipped
    assert codes(src) == ["empty"]


def _sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no disk space (reads back as NUL bytes)."""
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


@pytest.fixture
def forbid_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the reader opens the file's content instead of deciding by stat."""

    def refuse(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("a too-large note must be rejected by its size, unread")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    monkeypatch.setattr(Path, "open", refuse)
    monkeypatch.setattr("builtins.open", refuse)


@pytest.mark.parametrize("size", [MAX_NOTE_BYTES + 1, 10 * 1024 * 1024])
def test_read_note_too_large_is_skipped_without_reading(
    vault: Path, size: int, request: pytest.FixtureRequest
) -> None:
    _sparse(vault / "export.md", size)
    request.getfixturevalue("forbid_reading")
    src = read_note(vault, "export.md")
    assert src.skipped
    # NUL-filled content would say "binary": getting "too_large" proves nothing was read
    assert codes(src) == ["too_large"]
    assert str(size) in src.warnings[0].message
    assert src.text == ""


def test_read_note_exactly_at_the_limit_is_read(vault: Path) -> None:
    write(vault, "limit.md", b"a" * 1000)
    src = read_note(vault, "limit.md", max_bytes=1000)
    assert not src.skipped
    assert len(src.text) == 1000
    assert codes(read_note(vault, "limit.md", max_bytes=999)) == ["too_large"]


def test_default_limit_is_5_mib() -> None:
    assert MAX_NOTE_BYTES == 5 * 1024 * 1024


def test_read_note_directory_named_md_is_unreadable(vault: Path) -> None:
    (vault / "x.md").mkdir()
    src = read_note(vault, "x.md")
    assert src.skipped
    assert codes(src) == ["unreadable"]


def test_read_note_missing_file_is_unreadable(vault: Path) -> None:
    src = read_note(vault, "nope.md")
    assert src.skipped
    assert codes(src) == ["unreadable"]
    assert src.warnings[0].note == "nope.md"


def test_read_note_os_error_while_reading_is_unreadable(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, so permissions cannot make a file unreadable: simulate the OS error.
    write(vault, "locked.md", "secret\n")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    src = read_note(vault, "locked.md")
    assert src.skipped
    assert codes(src) == ["unreadable"]
    assert "Permission denied" in src.warnings[0].message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_read_note_fifo_does_not_block(vault: Path) -> None:
    os.mkfifo(vault / "pipe.md")
    result: list[NoteSource] = []
    worker = threading.Thread(target=lambda: result.append(read_note(vault, "pipe.md")))
    worker.daemon = True  # if reading blocks, do not hang the test run
    worker.start()
    worker.join(timeout=5)
    if worker.is_alive():
        # unblock the reader so the thread can finish, then fail
        with open(vault / "pipe.md", "wb"):
            pass
        pytest.fail("read_note blocked on a FIFO")
    assert codes(result[0]) == ["unreadable"]
    assert result[0].skipped


@pytest.mark.parametrize("rel", ["../outside.md", "/etc/hostname", "C:/x.md", "a\x00.md"])
def test_read_note_refuses_unsafe_paths(vault: Path, rel: str) -> None:
    with pytest.raises(UnsafePathError):
        read_note(vault, rel)


def test_read_note_refuses_symlink_escape(vault: Path, tmp_path: Path) -> None:
    write(tmp_path, "outside.md", "secret\n")
    (vault / "link.md").symlink_to(tmp_path / "outside.md")
    with pytest.raises(UnsafePathError):
        read_note(vault, "link.md")


def test_read_note_finds_nfd_file_by_nfc_path(vault: Path) -> None:
    write(vault, unicodedata.normalize("NFD", "Café.md"), "café\n")
    paths = list(iter_note_paths(vault))
    assert paths == [unicodedata.normalize("NFC", "Café.md")]
    src = read_note(vault, paths[0])
    assert src.text == "café\n"
    assert src.warnings == []


# ---------------------------------------------------------------------- iter_note_paths


@pytest.fixture
def walk_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel in [
        "Home.md",
        "Gameplay/Actor.md",
        "Gameplay/Deep/Nested/Note.md",
        "Upper.MD",
        "中文/笔记.md",
        ".obsidian/workspace.md",
        ".trash/old.md",
        ".git/notes.md",
        ".hidden/secret.md",
        "node_modules/pkg/readme.md",
        "Gameplay/.cache/x.md",
        "Templates/Daily.md",
        "Daily/2024-05-14.md",
        "Gameplay/Daily/kept.md",
        "Drawing.excalidraw.md",
        "image.png",
        "notes.txt",
        "README",
        "md",
    ]:
        write(root, rel, f"# {rel}\n")
    outside = tmp_path / "outside"
    write(outside, "escape.md", "secret\n")
    (root / "link-inside.md").symlink_to(root / "Home.md")
    (root / "link-outside.md").symlink_to(outside / "escape.md")
    (root / "LinkedFolder").symlink_to(outside, target_is_directory=True)
    (root / "dangling.md").symlink_to(tmp_path / "missing.md")
    (root / "folder.md").mkdir()  # a directory that looks like a note is not listed
    return root


def test_iter_note_paths_default_ignores(walk_vault: Path) -> None:
    assert list(iter_note_paths(walk_vault)) == [
        "Daily/2024-05-14.md",
        "Drawing.excalidraw.md",
        "Gameplay/Actor.md",
        "Gameplay/Daily/kept.md",
        "Gameplay/Deep/Nested/Note.md",
        "Home.md",
        "Templates/Daily.md",
        "Upper.MD",
        "中文/笔记.md",
    ]


def test_iter_note_paths_custom_ignore_globs(walk_vault: Path) -> None:
    ignores = (*DEFAULT_IGNORES, "Templates", "*.excalidraw.md", "Daily/*", "Deep")
    assert list(iter_note_paths(walk_vault, ignores)) == [
        "Gameplay/Actor.md",
        # "Daily/*" means the top-level Daily folder, not every folder named Daily
        "Gameplay/Daily/kept.md",
        "Home.md",
        "Upper.MD",
        "中文/笔记.md",
    ]


def test_iter_note_paths_hidden_folders_skipped_even_without_default_ignores(
    walk_vault: Path,
) -> None:
    paths = list(iter_note_paths(walk_vault, ignores=()))
    assert not [p for p in paths if any(part.startswith(".") for part in p.split("/"))]
    assert "node_modules/pkg/readme.md" in paths  # only ignored through DEFAULT_IGNORES


def test_iter_note_paths_never_lists_symlinks(walk_vault: Path) -> None:
    paths = list(iter_note_paths(walk_vault))
    assert not [p for p in paths if p.startswith(("link", "LinkedFolder", "dangling"))]
    assert all(not (walk_vault / p).is_symlink() for p in paths)


def test_iter_note_paths_is_sorted_and_canonical(walk_vault: Path) -> None:
    write(walk_vault, unicodedata.normalize("NFD", "Équipe/Réunion.md"), "x\n")
    paths = list(iter_note_paths(walk_vault))
    assert paths == sorted(paths)
    assert "Équipe/Réunion.md" in paths
    assert all(unicodedata.is_normalized("NFC", p) for p in paths)


def test_iter_note_paths_empty_vault(vault: Path) -> None:
    assert list(iter_note_paths(vault)) == []


@pytest.mark.parametrize(
    ("rel", "ignores", "expected"),
    [
        (".obsidian/x.md", DEFAULT_IGNORES, True),
        ("a/.trash/x.md", DEFAULT_IGNORES, True),
        ("a/b.md", DEFAULT_IGNORES, False),
        (".obsidian.md", DEFAULT_IGNORES, False),  # a note, not the .obsidian folder
        (".obsidian", DEFAULT_IGNORES, True),  # whole-path glob match
        ("Templates/t.md", ("Templates",), True),
        ("Templates.md", ("Templates",), False),
        ("a/Templates/t.md", ("Templates",), True),  # folder names match at any depth
        ("Daily/x.md", ("Daily/*",), True),
        ("Gameplay/Daily/x.md", ("Daily/*",), False),
        ("x.excalidraw.md", ("*.excalidraw.md",), True),
        ("a/x.excalidraw.md", ("*.excalidraw.md",), True),  # fnmatch `*` crosses `/`
        ("Archive2023/x.md", ("Archive*",), True),
    ],
)
def test_is_ignored(rel: str, ignores: tuple[str, ...], expected: bool) -> None:
    assert is_ignored(rel, ignores) is expected


def test_walk_does_not_descend_into_ignored_folders(
    walk_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    visited: list[str] = []
    real_scandir = os.scandir

    def spying_scandir(path: str):  # type: ignore[no-untyped-def]
        visited.append(Path(path).name)  # every folder the walk reads
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spying_scandir)
    list(iter_note_paths(walk_vault))
    assert visited  # (the spy sees the walk)
    assert not {".obsidian", ".trash", ".git", "node_modules", "LinkedFolder"} & set(visited)


# ---------------------------------------------------------------------- split_frontmatter


def test_frontmatter_valid() -> None:
    text = "---\ntags: [ue5, gameplay]\naliases:\n  - 生命周期\ncreated: 2024-03-04\n---\n# Body\n"
    data, body, start, warnings = split_frontmatter(text, "a.md")
    assert data == {
        "tags": ["ue5", "gameplay"],
        "aliases": ["生命周期"],
        "created": datetime.date(2024, 3, 4),
    }
    assert body == "# Body\n"
    assert start == 7
    assert warnings == []


@pytest.mark.parametrize(
    "text",
    [
        "---\na: 1\n---\nline one\nline two\n",
        "---\na: 1\n...\nbody\n",  # YAML document end marker also closes
        "---\n---\nbody",  # empty frontmatter
        "---\n\n\n---\n\nbody after blank\n",
        "---  \na: 1\n---\t\nbody\n",  # trailing whitespace on the fences
        "---\na: |\n  multi\n  line\n---\n",  # body is empty
        "no frontmatter\n---\nnot: yaml\n---\n",
    ],
)
def test_body_start_line_points_at_the_body(text: str) -> None:
    _, body, start, _ = split_frontmatter(text)
    assert "\n".join(text.split("\n")[start - 1 :]) == body


def test_frontmatter_closed_by_dots_and_empty() -> None:
    assert split_frontmatter("---\na: 1\n...\nbody") == ({"a": 1}, "body", 4, [])
    assert split_frontmatter("---\n---\nbody") == ({}, "body", 3, [])


def test_invalid_yaml_is_reported_and_still_removed_from_body() -> None:
    data, body, start, warnings = split_frontmatter("---\ntags: [a, b\n---\n# Body\n", "bad.md")
    assert data == {}
    assert body == "# Body\n"
    assert start == 4
    assert [w.code for w in warnings] == ["bad_frontmatter"]
    assert warnings[0].note == "bad.md"


@pytest.mark.parametrize(
    "yaml_text",
    [
        "created: 2024-02-30",  # looks like a date, is not one: PyYAML raises ValueError
        "created: 2024-13-01",
        "at: 2024-01-01 25:00:00",
        "n: !!int abc",
        "x: !!float nope",
        "t: !!timestamp never",
        "key: value\n\tindented: with tab",
        "a: b: c",
    ],
)
def test_yaml_that_raises_is_bad_frontmatter_not_a_crash(yaml_text: str) -> None:
    data, body, _, warnings = split_frontmatter(f"---\n{yaml_text}\n---\nbody\n", "n.md")
    assert data == {}
    assert body == "body\n"
    assert [w.code for w in warnings] == ["bad_frontmatter"]


def test_unsafe_yaml_tags_are_refused() -> None:
    text = "---\nx: !!python/object/apply:os.system ['echo pwned']\n---\nbody"
    data, body, _, warnings = split_frontmatter(text)
    assert data == {}
    assert body == "body"
    assert [w.code for w in warnings] == ["bad_frontmatter"]


@pytest.mark.parametrize("yaml_text", ["- a\n- b", "just a sentence", "42", "[1, 2]"])
def test_non_mapping_yaml_is_bad_frontmatter(yaml_text: str) -> None:
    data, body, start, warnings = split_frontmatter(f"---\n{yaml_text}\n---\nbody", "n.md")
    assert data == {}
    assert body == "body"
    assert start == yaml_text.count("\n") + 4
    assert [w.code for w in warnings] == ["bad_frontmatter"]
    assert "mapping" in warnings[0].message


def test_comment_only_or_null_yaml_is_empty_without_warning() -> None:
    assert split_frontmatter("---\n# just a comment\n---\nbody") == ({}, "body", 4, [])
    assert split_frontmatter("---\n~\n---\nbody") == ({}, "body", 4, [])


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: no closing fence\n# Heading\ntext\n",
        "---",
        "---\n",
        "\n---\na: 1\n---\nbody",  # not on the very first line
        " ---\na: 1\n---\nbody",
        "----\na: 1\n----\nbody",  # four dashes is not a fence
        "# Title\n---\na: 1\n---\n",
        "",
    ],
)
def test_not_frontmatter(text: str) -> None:
    assert split_frontmatter(text) == ({}, text, 1, [])


def test_frontmatter_keys_become_strings() -> None:
    data, _, _, warnings = split_frontmatter("---\n1: one\nnull: z\n2024-01-01: d\n---\n")
    assert data == {"1": "one", "None": "z", "2024-01-01": "d"}
    assert warnings == []


def test_horizontal_rule_pair_at_top_is_frontmatter_like_in_obsidian() -> None:
    text = "---\nSome text: with a colon\n---\nrest"
    data, body, _, _ = split_frontmatter(text)
    assert data == {"Some text": "with a colon"}
    assert body == "rest"


# ---------------------------------------------------------------------- as_string_list


@pytest.mark.parametrize(
    ("value", "split_spaces", "expected"),
    [
        (None, False, []),
        ([], False, []),
        ("", False, []),
        (["ue5", "gameplay"], True, ["ue5", "gameplay"]),
        (["#ue5", " gameplay ", None, "", "#"], True, ["ue5", "gameplay"]),
        ("ue5, gameplay", True, ["ue5", "gameplay"]),
        ("#ue5 #gameplay", True, ["ue5", "gameplay"]),
        ("rendering ue5, cpp", True, ["rendering", "ue5", "cpp"]),
        ("#ue5 #gameplay", False, ["ue5 #gameplay"]),
        # aliases keep their spaces; only commas split them
        ("Actor Lifecycle, 生命周期", False, ["Actor Lifecycle", "生命周期"]),
        (["Actor Lifecycle", "生命周期"], False, ["Actor Lifecycle", "生命周期"]),
        (("a", "b"), False, ["a", "b"]),
        (2024, False, ["2024"]),
        ([2024, 1.5, True], False, ["2024", "1.5", "True"]),
        (["a, b"], False, ["a, b"]),  # list items are never split
    ],
)
def test_as_string_list(value: object, split_spaces: bool, expected: list[str]) -> None:
    assert as_string_list(value, split_spaces=split_spaces) == expected
