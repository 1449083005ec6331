"""Embed resolution: provenance, dependencies, warnings and robustness (the fixture suite in
test_embed_fixtures.py covers the Obsidian rules one by one)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_rag.vault.embeds import MAX_EMBEDS, resolve_note, resolve_text
from vault_rag.vault.frontmatter import split_frontmatter
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.paths import UnsafePathError
from vault_rag.vault.reader import NoteSource, read_note
from vault_rag.vault.types import WARNING_CODES, ResolvedNote


def resolve(notes: Mapping[str, str], path: str, **kwargs: int) -> ResolvedNote:
    return resolve_text(path, notes[path], NoteIndex(notes), notes.get, **kwargs)


def assert_spans_tile(resolved: ResolvedNote) -> None:
    position = 0
    for span in resolved.spans:
        assert span.start == position < span.end
        position = span.end
    assert position == len(resolved.text)


def locate(resolved: ResolvedNote, offset: int) -> tuple[str, int, int]:
    """(origin note, origin file line, host file line) of the character at `offset`, read
    from the spans (the test's oracle; the product reads spans through the chunker)."""
    for span in resolved.spans:
        if span.start <= offset < span.end:
            # Only the note's own text spans several lines, and there both lines advance.
            step = resolved.text.count("\n", span.start, offset)
            return span.origin, span.origin_line + step, span.host_line + step
    raise IndexError(offset)


def char_origin(resolved: ResolvedNote, needle: str) -> tuple[str, int, int]:
    offset = resolved.text.index(needle)
    return locate(resolved, offset)


NOTES = {
    "Host.md": (
        "---\ntitle: Host\n---\n"  # lines 1-3
        "# Host\n"  # 4
        "\n"  # 5
        "own line six\n"  # 6
        "![[Target#Part]]\n"  # 7
        "own line eight\n"  # 8
        "> quoted ![[Target#^blk]] tail\n"  # 9
        "last own line\n"  # 10
    ),
    "Target.md": (
        "---\nx: 1\n---\n"  # 1-3
        "Intro.\n"  # 4
        "\n"  # 5
        "## Part\n"  # 6
        "part one\n"  # 7
        "![[Deep]]\n"  # 8
        "part three\n"  # 9
        "## Next\n"  # 10
        "Block text ^blk\n"  # 11
    ),
    "Deep.md": "deep one\ndeep two\n",
}


def test_text_frontmatter_and_body_start() -> None:
    resolved = resolve(NOTES, "Host.md")
    assert resolved.frontmatter == {"title": "Host"}
    assert resolved.body_start_line == 4
    assert resolved.text == (
        "# Host\n\nown line six\n"
        "## Part\npart one\ndeep one\ndeep two\npart three\n"
        "own line eight\n"
        "> quoted Block text tail\n"
        "last own line\n"
    )
    assert resolved.dependencies == ["Deep.md", "Target.md"]
    assert resolved.warnings == []
    assert_spans_tile(resolved)


def test_provenance_maps_every_line() -> None:
    resolved = resolve(NOTES, "Host.md")
    assert char_origin(resolved, "# Host") == ("Host.md", 4, 4)
    assert char_origin(resolved, "own line six") == ("Host.md", 6, 6)
    assert char_origin(resolved, "## Part") == ("Target.md", 6, 7)
    assert char_origin(resolved, "part one") == ("Target.md", 7, 7)
    # Nested embed: origin is the deepest note, host is still the top-level embed line.
    assert char_origin(resolved, "deep one") == ("Deep.md", 1, 7)
    assert char_origin(resolved, "deep two") == ("Deep.md", 2, 7)
    assert char_origin(resolved, "part three") == ("Target.md", 9, 7)
    assert char_origin(resolved, "own line eight") == ("Host.md", 8, 8)
    assert char_origin(resolved, "quoted") == ("Host.md", 9, 9)
    assert char_origin(resolved, "Block text") == ("Target.md", 11, 9)
    assert char_origin(resolved, " tail") == ("Host.md", 9, 9)
    assert char_origin(resolved, "last own line") == ("Host.md", 10, 10)


def test_every_character_maps_to_its_source_line() -> None:
    """Each resolved line's text must appear on the origin line that provenance names."""
    resolved = resolve(NOTES, "Host.md")
    sources = {path: text.split("\n") for path, text in NOTES.items()}
    offset = 0
    for line in resolved.text.split("\n"):
        if line:
            origin, origin_line, _ = locate(resolved, offset)
            assert line.split(" ")[-1] in sources[origin][origin_line - 1], line
        offset += len(line) + 1


def test_spans_of_own_text_are_merged() -> None:
    notes = {"A.md": "one\ntwo\nthree\n"}
    resolved = resolve(notes, "A.md")
    assert len(resolved.spans) == 1
    assert locate(resolved, resolved.text.index("three")) == ("A.md", 3, 3)


def test_embedded_spans_never_cross_a_line_break() -> None:
    resolved = resolve(NOTES, "Host.md")
    for span in resolved.spans:
        if span.origin != "Host.md":
            assert "\n" not in resolved.text[span.start : span.end - 1]


def test_dependencies_are_transitive_sorted_and_deduplicated() -> None:
    notes = {
        "A.md": "![[C]] ![[B]] ![[C]] ![[Missing]] ![[B#Nope]]\n",
        "B.md": "b ![[D]]\n",
        "C.md": "c ![[D]]\n",
        "D.md": "d\n",
    }
    resolved = resolve(notes, "A.md")
    assert resolved.dependencies == ["B.md", "C.md", "D.md"]
    codes = sorted((w.code, w.target) for w in resolved.warnings)
    assert codes == [("missing_heading", "B#Nope"), ("missing_note", "Missing")]


def test_warning_fields_point_at_the_embed() -> None:
    notes = {
        "A.md": "---\nk: v\n---\nline one\n![[Gone|shown]]\n![[B]]\n",
        "B.md": "---\nk: v\n---\n\nb\n\n![[Ghost#H]]\n",
    }
    resolved = resolve(notes, "A.md")
    by_target = {w.target: w for w in resolved.warnings}
    gone = by_target["Gone|shown"]
    assert (gone.code, gone.note, gone.line) == ("missing_note", "A.md", 5)
    ghost = by_target["Ghost#H"]  # reported in the note that contains it, at its file line
    assert (ghost.code, ghost.note, ghost.line) == ("missing_note", "B.md", 7)
    assert all(w.code in WARNING_CODES for w in resolved.warnings)


def test_same_broken_embed_reached_twice_warns_once() -> None:
    notes = {"A.md": "![[B]]\n\n![[B]]\n", "B.md": "![[Ghost]]\n"}
    resolved = resolve(notes, "A.md")
    assert [(w.code, w.note) for w in resolved.warnings] == [("missing_note", "B.md")]


def test_max_depth_parameter() -> None:
    notes = {"A.md": "![[B]]\n", "B.md": "![[C]]\n", "C.md": "c\n"}
    assert resolve(notes, "A.md", max_depth=1).text == "![[C]]\n"
    assert resolve(notes, "A.md", max_depth=2).text == "c\n"
    assert resolve(notes, "A.md", max_depth=0).text == "![[B]]\n"


def test_fan_out_is_capped() -> None:
    # 10 embeds per level, 6 levels: a million inlined notes without the cap.
    notes = {f"N{k}.md": f"{k} " + " ".join([f"![[N{k + 1}]]"] * 10) + "\n" for k in range(6)}
    notes["N6.md"] = "leaf\n"
    started = time.monotonic()
    resolved = resolve(notes, "N0.md")
    assert time.monotonic() - started < 20
    assert resolved.text.count("leaf") <= MAX_EMBEDS
    assert any(w.code == "max_depth" for w in resolved.warnings)
    assert_spans_tile(resolved)


def test_embed_of_own_heading_inside_embedded_note_is_self_embed() -> None:
    notes = {"A.md": "![[B]]\n", "B.md": "## H\nh text ![[#H]]\n\n## I\n![[#H]]\n"}
    resolved = resolve(notes, "A.md")
    assert resolved.text == "## H\nh text ![[#H]]\n\n## I\n## H\nh text ![[#H]]\n"
    assert [(w.code, w.note) for w in resolved.warnings] == [("self_embed", "B.md")]


def test_heading_fallback_for_block_syntax() -> None:
    # Obsidian tries `#^x` as a heading when no block has that id (stripHeading drops `^`).
    notes = {"A.md": "![[B#^intro]]\n", "B.md": "# Intro\ntext\n"}
    assert resolve(notes, "A.md").text == "# Intro\ntext\n"


def test_lazy_block_id_names_the_last_list_item() -> None:
    notes = {"A.md": "![[B#^lazy]]\n", "B.md": "- a\n- b\n^lazy\n"}
    assert resolve(notes, "A.md").text == "- b\n"


def test_block_id_needs_whitespace() -> None:
    notes = {"A.md": "![[B#^id]]\n", "B.md": "![[img.png]]^id\n"}
    assert [w.code for w in resolve(notes, "A.md").warnings] == ["missing_block"]


def test_crlf_text_is_normalised() -> None:
    notes = {"A.md": "one\r\n![[B]]\r\nthree\r\n", "B.md": "b1\r\nb2\r\n"}
    resolved = resolve(notes, "A.md")
    assert resolved.text == "one\nb1\nb2\nthree\n"
    assert locate(resolved, resolved.text.index("three")) == ("A.md", 3, 3)


def test_loader_failures_become_warnings() -> None:
    def load(path: str) -> str | None:
        if path == "Broken.md":
            raise OSError("disk on fire")
        return None

    index = NoteIndex(["A.md", "Broken.md", "Gone.md"])
    resolved = resolve_text("A.md", "![[Broken]]\n![[Gone]]\n", index, load)
    assert resolved.text == "![[Broken]]\n![[Gone]]\n"
    assert sorted((w.code, w.target) for w in resolved.warnings) == [
        ("unreadable", "Broken"),
        ("unreadable", "Gone"),
    ]


def test_unsafe_top_path_raises() -> None:
    with pytest.raises(UnsafePathError):
        resolve_text("../outside.md", "x", NoteIndex([]), lambda p: None)


def test_unsaved_note_can_embed_its_own_heading_by_name() -> None:
    resolved = resolve_text(
        "Draft.md", "# Top\n![[Draft#Other]]\n# Other\no\n", NoteIndex([]), lambda p: None
    )
    assert resolved.text == "# Top\n# Other\no\n# Other\no\n"


# ------------------------------------------------------------------ reading from disk


def write(root: Path, rel: str, data: bytes | str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def test_resolve_note_reads_the_vault(tmp_path: Path) -> None:
    write(tmp_path, "A.md", "a ![[B#^x]]\n")
    write(tmp_path, "Sub/B.md", "para ^x\n")
    resolved = resolve_note(tmp_path, "A.md")
    assert resolved.text == "a para\n"
    assert resolved.dependencies == ["Sub/B.md"]


def test_skipped_top_note_gives_empty_text(tmp_path: Path) -> None:
    write(tmp_path, "Bin.md", b"\x00\x01binary")
    resolved = resolve_note(tmp_path, "Bin.md")
    assert resolved.text == "" and resolved.spans == []
    assert [w.code for w in resolved.warnings] == ["binary"]


def test_top_note_reader_warnings_are_kept(tmp_path: Path) -> None:
    write(tmp_path, "A.md", b"caf\xe9 ![[B]]\n")
    write(tmp_path, "B.md", "b\n")
    resolved = resolve_note(tmp_path, "A.md")
    assert resolved.text == "caf\ufffd b\n"
    assert [w.code for w in resolved.warnings] == ["invalid_utf8"]


def test_binary_and_too_large_targets_stay_as_links(tmp_path: Path) -> None:
    write(tmp_path, "A.md", "![[Bin]]\n![[Big]]\n![[Ok]]\n")
    write(tmp_path, "Bin.md", b"\x00\x00")
    write(tmp_path, "Big.md", "x" * 500)
    write(tmp_path, "Ok.md", "ok\n")

    def small_reader(root: Path, rel: str) -> NoteSource:
        return read_note(root, rel, max_bytes=100)

    resolved = resolve_note(tmp_path, "A.md", reader=small_reader)
    assert resolved.text == "![[Bin]]\n![[Big]]\nok\n"
    assert sorted((w.code, w.target) for w in resolved.warnings) == [
        ("binary", "Bin"),
        ("too_large", "Big"),
    ]
    assert resolved.dependencies == ["Ok.md"]


# ------------------------------------------------------------------ never raises

FRAGMENTS = [
    "![[A]]", "![[B#H]]", "![[A#^x]]", "![[B#H#I|al]]", "![[#H]]", "![[#^x]]", "![[C]]",
    "![[img.png]]", "![[", "]]", "![[]]", "![[|]]", "![[#]]", "# H", "## I", "### H",
    "- ", "  - ", "1. ", "> ", "```", "~~~", "`", "    ", "^x", " ^x", "\n", "\n\n", "| a | b |",
    "|---|---|", "---", "\t", "\\", "<div>", "$$", "%%", "[[A]]", "*", "[", "]", "#", "|", "^",
]  # fmt: skip
markdown = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40).map(
    "".join
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(top=markdown, a=markdown, b=markdown)
def test_resolve_text_never_raises(top: str, a: str, b: str) -> None:
    notes = {"Top.md": top, "A.md": a, "Dir/B.md": b, "C.md": "![[Top]] ![[A]]"}
    resolved = resolve(notes, "Top.md")
    assert_spans_tile(resolved)
    for offset in range(0, len(resolved.text), 7):
        origin, origin_line, host_line = locate(resolved, offset)
        assert origin in notes and origin_line >= 1 and host_line >= 1
    assert set(resolved.dependencies) <= set(notes) - {"Top.md"}
    assert resolved.dependencies == sorted(set(resolved.dependencies))
    assert all(w.code in WARNING_CODES for w in resolved.warnings)
    # Nothing to inline or hide: the text is the note's own body, unchanged. (`%%comments%%`
    # are cut, as Obsidian shows none: the `comments-left-out` fixtures pin that.)
    if "![[" not in top and "%%" not in top:
        _, body, _, _ = split_frontmatter(top.replace("\r\n", "\n").replace("\r", "\n"))
        assert resolved.text == body
