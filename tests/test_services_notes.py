"""`services/notes.py` on a real index of the sample vault: reading a note by file lines
(embeds sit on the line of their embed), reading on after a cut, listing pages."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vault_rag.services.errors import ServiceError
from vault_rag.services.notes import list_notes, read_note_text
from vault_rag.settings import Settings
from vault_rag.vault.exclusions import Exclusions


@pytest.fixture(scope="module")
def parts(hashed_index, tmp_path_factory):
    data = tmp_path_factory.mktemp("parts")
    exclusions = Exclusions(data, tuple(Settings().ignore), ["Daily"], [])
    return SimpleNamespace(
        settings=Settings(), index=hashed_index, exclusions=exclusions, prior=None
    )


def test_following_next_start_line_reads_the_whole_note_and_ends(parts) -> None:
    path = "C++/UObject 与 GC.md"
    whole = read_note_text(parts, path, max_chars=10**6)
    assert not whole.truncated and whole.next_start_line is None
    seen: list[str] = []
    start = None
    for _ in range(40):
        note = read_note_text(parts, path, start_line=start, max_chars=1000)
        seen.append(note.text)
        if not note.truncated:
            break
        assert note.next_start_line is not None and note.next_start_line > (start or 1)
        start = note.next_start_line
    else:
        pytest.fail("reading on never ended")
    assert len(seen) >= 4
    joined = "".join(seen)
    for line in whole.text.splitlines():
        assert line in joined  # nothing skipped between pages


def test_an_embed_sits_on_the_line_of_its_embed(parts) -> None:
    line15 = read_note_text(parts, "踩坑记录 Pitfalls.md", start_line=15, end_line=15)
    assert "没有 UPROPERTY 的 UObject 指针成员不会阻止 GC 回收" in line15.text
    assert [(e.note, e.host_line) for e in line15.embeds] == [("C++/UObject 与 GC.md", 15)]
    raw = read_note_text(
        parts, "踩坑记录 Pitfalls.md", resolve_embeds=False, start_line=15, end_line=15
    )
    assert raw.text == "![[UObject 与 GC#^gc-pitfall]]\n" and raw.embeds == []


def test_listing_pages_cover_the_index_in_order_without_excluded_notes(parts) -> None:
    paths: list[str] = []
    cursor = None
    while True:
        page = list_notes(parts, cursor=cursor, page_size=7)
        paths += [n.path for n in page.notes]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    indexed = sorted(p for p in parts.index.manifest.notes() if not p.startswith("Daily/"))
    assert paths == indexed
    with pytest.raises(ServiceError) as refused:
        list_notes(parts, folder="Daily")
    assert refused.value.code == "excluded"
