"""Promote: an answer becomes a new note, only inside the answers folder, never overwriting,
atomically; the note is indexed like any other, retrievable, and marked as promoted."""

from __future__ import annotations

import dataclasses
import datetime as dt
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from test_feedback_ranking import sample_index_for
from vault_rag.cli import app
from vault_rag.feedback import promote as promote_module
from vault_rag.feedback.answers import AnswerRecord, record_answer
from vault_rag.feedback.promote import (
    MAX_NAME_BYTES,
    PromoteError,
    promote_answer,
    promote_by_id,
    render_note,
    safe_name,
)
from vault_rag.feedback.store import submit_feedback
from vault_rag.index.updates.indexer import Indexer
from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
from vault_rag.vault.frontmatter import split_frontmatter

FOLDER = "Vault RAG Answers"
WHEN = dt.datetime(2024, 5, 10, 14, 30, tzinfo=dt.UTC)

ANSWER = AnswerRecord(
    answer_id="ans1",
    question='Why does "Montage_Play" do nothing?\nIt: returns 0 | always',
    answer='Check the slot [[Animation/Montage Slots#Slot: "Default"]] first.',
    citations=[
        {
            "kind": "vault",
            "note_path": "Animation/Montage Slots.md",
            "heading": 'Montage Slots > Slot: "Default"',
            "anchor": 'Slot: "Default"',
            "chunk_id": "c1",
        },
        {
            "kind": "vault",
            "note_path": "C++/Delegates.md",
            "heading": "",
            "anchor": "",
            "chunk_id": "c2",
        },
        {
            "kind": "vault",
            "note_path": "Odd.md",
            "heading": "A > B|C [x] #y",
            "anchor": "B|C [x] #y",
            "chunk_id": "c3",
        },
        {
            "kind": "web",
            "url": "https://dev.epicgames.com/montage",
            "title": "Montage",
            "doc_id": "w",
        },
    ],
    model="qwen3-8b",
)


def notes_in(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.md"))


def frontmatter_of(path: Path) -> tuple[dict, str]:
    data, body, _, warnings = split_frontmatter(path.read_text(encoding="utf-8"))
    assert not warnings, warnings
    return data, body


# -- the note ---------------------------------------------------------------------------------


def test_the_note_has_valid_frontmatter_links_and_a_sources_section(tmp_path):
    path = promote_answer(tmp_path, FOLDER, ANSWER, title="Montage", rating=1, now=WHEN)
    assert path == tmp_path / FOLDER / "Montage.md"
    data, body = frontmatter_of(path)
    assert data["question"] == ANSWER.question
    assert data["date"] == dt.date(2024, 5, 10)
    assert (data["model"], data["rating"], data["origin"]) == ("qwen3-8b", 1, "promoted")
    assert data["answer_id"] == "ans1"
    assert data["sources"] == [
        '[[Animation/Montage Slots#Slot: "Default"]]',
        "[[C++/Delegates]]",
        "[[Odd#B C x y]]",  # `|`, `[]`, `#` would break the link: dropped
    ]
    assert data["web_sources"] == ["https://dev.epicgames.com/montage"]
    assert "> [!question]\n> Why does" in body and ANSWER.answer in body
    sources = body.split("## Sources", 1)[1]
    assert "- [[C++/Delegates]]" in sources
    assert "- [Montage](<https://dev.epicgames.com/montage>)" in sources
    # The YAML is plain and safe: every link is a quoted string, not a nested list.
    raw = path.read_text(encoding="utf-8").split("---")[1]
    assert yaml.safe_load(raw)["sources"][1] == "[[C++/Delegates]]"


def test_the_default_title_is_the_question_and_unrated_is_null(tmp_path):
    path = promote_answer(tmp_path, FOLDER, ANSWER, now=WHEN)
    assert path.name == "Why does Montage_Play do nothing.md"
    assert frontmatter_of(path)[0]["rating"] is None


def test_an_answer_without_sources_says_so(tmp_path):
    bare = AnswerRecord("a", "q", "just text", [], None)
    data, body = frontmatter_of(promote_answer(tmp_path, FOLDER, bare, now=WHEN))
    assert data["sources"] == [] and data["model"] is None
    assert "_No sources were cited._" in body


def test_control_characters_never_reach_the_note(tmp_path):
    odd = AnswerRecord("a", "nul\x00 bell\x07\r\nnext", "text\x00 \x1b[31mred", [], None)
    path = promote_answer(tmp_path, FOLDER, odd, title="T", now=WHEN)
    raw = path.read_bytes()
    assert b"\x00" not in raw and b"\x07" not in raw and b"\x1b" not in raw and b"\r" not in raw
    data, body = frontmatter_of(path)
    assert data["question"] == "nul bell\nnext" and "text [31mred" in body


def test_promote_by_id_takes_the_recorded_answer_and_latest_rating(tmp_path):
    data_dir, vault = tmp_path / "data", tmp_path / "vault"
    vault.mkdir()
    record_answer(
        data_dir,
        **{
            k: getattr(ANSWER, k) for k in ("answer_id", "question", "answer", "citations", "model")
        },
    )
    submit_feedback(data_dir, "ans1", "down")
    submit_feedback(data_dir, "ans1", "up")
    path = promote_by_id(data_dir, vault, FOLDER, "ans1", title="T")
    assert frontmatter_of(path)[0]["rating"] == 1


# -- only inside the answers folder -----------------------------------------------------------


HOSTILE_TITLES = [
    "../../outside",
    "../",
    "a/b/c",
    "a\\b\\..\\c",
    "/etc/passwd",
    "C:\\Windows\\evil",
    '<>:"|?*',
    "CON",
    "con.txt",
    "LPT1 ",
    "com3.md",
    ".hidden",
    "..",
    "...",
    " . ",
    "tab\tnew\nline\x00nul\x1besc",
    "evil\u202egpj.md",  # right-to-left override would show a fake extension
    "links [[break]] #here ^there",
    "长" * 400,
    "x" * 1000,
]


@pytest.mark.parametrize("title", HOSTILE_TITLES, ids=range(len(HOSTILE_TITLES)))
def test_hostile_titles_stay_one_safe_file_in_the_answers_folder(tmp_path, title):
    vault = tmp_path / "vault"
    vault.mkdir()
    path = promote_answer(vault, FOLDER, ANSWER, title=title, now=WHEN)
    assert path.parent == vault / FOLDER
    assert [p.name for p in (vault / FOLDER).iterdir()] == [path.name]
    assert list(tmp_path.iterdir()) == [vault]  # nothing written beside the vault
    stem = path.name[:-3]
    assert stem and not stem.startswith(".") and stem == stem.strip(" .")
    assert not set(stem) & set('<>:"/\\|?*#^[]\x00\t\n\x1b\u202e')
    assert stem.split(".")[0].strip().upper() not in {"CON", "PRN", "AUX", "NUL", "COM3", "LPT1"}
    assert len(stem.encode()) <= MAX_NAME_BYTES


def test_safe_name_keeps_ordinary_titles():
    assert safe_name("Niagara 入门 – GPU sim (v2)") == "Niagara 入门 – GPU sim (v2)"
    assert safe_name("  ") == "Answer"


@pytest.mark.parametrize("folder", ["../x", "../../", "/abs", "C:/x", "a/../../b", "...", "\x00"])
def test_a_folder_outside_the_answers_folder_is_refused(tmp_path, folder):
    with pytest.raises(PromoteError, match="folder"):
        promote_answer(tmp_path, FOLDER, ANSWER, folder=folder, now=WHEN)
    assert notes_in(tmp_path) == []


def test_sub_folders_stay_under_the_answers_folder(tmp_path):
    a = promote_answer(tmp_path, FOLDER, ANSWER, title="T", folder="UE/Anim", now=WHEN)
    b = promote_answer(tmp_path, FOLDER, ANSWER, title="T", folder=f"{FOLDER}/UE/Anim", now=WHEN)
    c = promote_answer(tmp_path, FOLDER, ANSWER, title="T", folder='a?b/"c"', now=WHEN)
    assert a == tmp_path / FOLDER / "UE/Anim/T.md"
    assert b == tmp_path / FOLDER / "UE/Anim/T (2).md"  # a vault-relative folder is the same
    assert c == tmp_path / FOLDER / "a b/c/T.md"


@pytest.mark.parametrize("answers_folder", ["../answers", "/tmp/answers", "", ".obsidian", "a|b"])
def test_an_unusable_answers_folder_is_refused(tmp_path, answers_folder):
    vault = tmp_path / "v"
    vault.mkdir()
    with pytest.raises(PromoteError, match="answers folder"):
        promote_answer(vault, answers_folder, ANSWER, now=WHEN)
    assert list(tmp_path.rglob("*")) == [vault]


def test_a_missing_vault_is_refused(tmp_path):
    with pytest.raises(PromoteError, match="not a folder"):
        promote_answer(tmp_path / "nope", FOLDER, ANSWER, now=WHEN)
    assert not (tmp_path / "nope").exists()


def test_symlinks_cannot_lead_out_of_the_answers_folder(tmp_path):
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / FOLDER).mkdir(parents=True)
    (vault / "Elsewhere").mkdir()
    outside.mkdir()
    (vault / FOLDER / "out").symlink_to(outside)
    (vault / FOLDER / "side").symlink_to(vault / "Elsewhere")
    for folder in ("out", "side", "side/deeper"):
        with pytest.raises(PromoteError, match="outside"):
            promote_answer(vault, FOLDER, ANSWER, folder=folder, now=WHEN)
    assert list((vault / "Elsewhere").iterdir()) == []  # refused before creating anything
    (vault / "Linked").symlink_to(outside)
    with pytest.raises(PromoteError, match="outside the vault"):
        promote_answer(vault, "Linked", ANSWER, now=WHEN)
    assert list(outside.iterdir()) == [] and notes_in(vault) == []


# -- never overwrites -------------------------------------------------------------------------


def test_an_existing_name_gets_a_number_and_is_left_alone(tmp_path):
    folder = tmp_path / FOLDER
    folder.mkdir()
    (folder / "T.md").write_text("mine", encoding="utf-8")
    (folder / "T (2).md").mkdir()  # even a folder with a note's name is not replaced
    first = promote_answer(tmp_path, FOLDER, ANSWER, title="T", now=WHEN)
    second = promote_answer(tmp_path, FOLDER, ANSWER, title="T", now=WHEN)
    assert (first.name, second.name) == ("T (3).md", "T (4).md")
    assert (folder / "T.md").read_text(encoding="utf-8") == "mine"


def test_concurrent_promotes_of_one_title_all_land_under_distinct_names(tmp_path):
    paths: list[Path] = []
    barrier = threading.Barrier(8)

    def work() -> None:
        barrier.wait()
        paths.append(promote_answer(tmp_path, FOLDER, ANSWER, title="Same", now=WHEN))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(paths)) == 8 and sorted(paths) == notes_in(tmp_path)
    expected = paths[0].read_bytes()
    assert all(p.read_bytes() == expected for p in paths)


def test_without_hard_links_the_fallback_still_never_overwrites(tmp_path, monkeypatch):
    def no_links(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(promote_module.os, "link", no_links)
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "T.md").write_text("mine", encoding="utf-8")
    path = promote_answer(tmp_path, FOLDER, ANSWER, title="T", now=WHEN)
    assert path.name == "T (2).md" and frontmatter_of(path)[0]["origin"] == "promoted"
    assert (tmp_path / FOLDER / "T.md").read_text(encoding="utf-8") == "mine"
    assert [p.name for p in (tmp_path / FOLDER).iterdir() if not p.name.endswith(".md")] == []


# -- atomic ---------------------------------------------------------------------------------


def test_a_failure_after_the_temp_file_is_written_leaves_no_note(tmp_path, monkeypatch):
    written: list[bytes] = []

    def crash(temp: Path, target: Path) -> None:
        written.append(temp.read_bytes())  # the full content was in the temp file
        raise OSError(errno.EIO, "disk gone")

    monkeypatch.setattr(promote_module, "_place_no_replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        promote_answer(tmp_path, FOLDER, ANSWER, title="T", now=WHEN)
    assert written and written[0].endswith(b"\n")
    assert list((tmp_path / FOLDER).iterdir()) == []  # no note, and the temp file is gone


CHILD = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from vault_rag.feedback import promote
    from vault_rag.feedback.answers import AnswerRecord

    vault, mode = Path(sys.argv[1]), sys.argv[2]
    answer = AnswerRecord("a", "q", "body " * 20000 + "END", [], None)
    if mode == "pause":
        real_fsync = os.fsync
        def fsync_then_hang(fd):
            real_fsync(fd)
            print("written", flush=True)
            time.sleep(60)
        promote.os.fsync = fsync_then_hang
        promote.promote_answer(vault, "Answers", answer, title="T")
    else:
        print("started", flush=True)
        while True:
            promote.promote_answer(vault, "Answers", answer, title="T")
    """
)


def spawn(vault: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(vault), mode], stdout=subprocess.PIPE, text=True
    )


def test_kill_9_after_the_content_is_written_leaves_no_partial_note(tmp_path):
    child = spawn(tmp_path, "pause")
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "written"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    folder = tmp_path / "Answers"
    (temp,) = folder.iterdir()  # only the temp file: not a note, ignored by the indexer
    assert temp.name.startswith(".vault-rag-") and temp.suffix == ".tmp"
    assert notes_in(tmp_path) == []
    # The next promote sweeps a temp file old enough to be a crash's leftover.
    old = time.time() - 2 * promote_module.STALE_TEMP_SECONDS
    os.utime(temp, (old, old))
    path = promote_answer(tmp_path, "Answers", ANSWER, title="T", now=WHEN)
    assert list(folder.iterdir()) == [path]


def test_kill_9_at_any_moment_leaves_only_whole_notes(tmp_path):
    total = 0
    for delay in (0.3, 0.55, 0.8):
        vault = tmp_path / f"v{delay}"
        vault.mkdir()
        child = spawn(vault, "loop")
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "started"
            time.sleep(delay)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(timeout=30)
        notes = notes_in(vault)
        total += len(notes)
        for note in notes:
            data, body = frontmatter_of(note)
            assert data["origin"] == "promoted" and body.rstrip().endswith(
                "## Sources\n\n_No sources were cited._"
            )
            assert "END" in body
    assert total > 0  # the child did get notes out between the kills


# -- indexed like any note, retrievable, marked promoted --------------------------------------

UNIQUE = "Zorbulator"  # a word no sample note contains: the promoted note is the only match
PROMOTED_ANSWER = AnswerRecord(
    answer_id="zorb",
    question=f"How do I reset the {UNIQUE} montage slot?",
    answer=(
        f"Call {UNIQUE}::ResetSlot before Montage_Play, then play the montage again; "
        "see [[Animation/Montage Slots]]."
    ),
    citations=[
        {"kind": "vault", "note_path": "Animation/Montage Slots.md", "anchor": "", "chunk_id": "m"}
    ],
    model="qwen3-8b",
)


@pytest.fixture(scope="module")
def vault_index(tmp_path_factory, sample_vault):
    vault = tmp_path_factory.mktemp("promote") / "vault"
    shutil.copytree(sample_vault, vault)
    index = sample_index_for(vault)
    yield index
    index.close()


def test_a_promoted_note_is_indexed_retrievable_and_marked(vault_index):
    vault = vault_index.vault_root
    path = promote_answer(vault, FOLDER, PROMOTED_ANSWER, title="Zorbulator slots", now=WHEN)
    summary = Indexer(vault_index).run()
    assert summary.notes_changed == 1 and summary.chunks_pending == 0
    rel = path.relative_to(vault).as_posix()
    assert rel == f"{FOLDER}/Zorbulator slots.md" and not vault_index.manifest.warnings(rel)

    results = hybrid_search(vault_index, f"{UNIQUE} ResetSlot", SearchOptions(k=5))
    assert results[0].note_path == rel and results[0].promoted
    assert not any(r.promoted for r in results if r.note_path != rel)

    ordinary = hybrid_search(vault_index, "Montage_Play does nothing", SearchOptions(k=10))
    assert ordinary and not any(r.promoted and r.note_path != rel for r in ordinary)

    excluded = hybrid_search(
        vault_index, f"{UNIQUE} ResetSlot", SearchOptions(k=5, include_promoted=False)
    )
    assert rel not in [r.note_path for r in excluded]


def test_cli_promote_writes_and_indexes(vault_index, monkeypatch):
    monkeypatch.delenv("VAULT_RAG_CONFIG", raising=False)
    monkeypatch.setenv("VAULT_RAG_ANSWERS_FOLDER", "Saved")
    vault, data_dir = vault_index.vault_root, vault_index.data_dir
    fields = ("answer_id", "question", "answer", "citations", "model")
    record_answer(data_dir, **{k: getattr(PROMOTED_ANSWER, k) for k in fields})
    where = ["--vault", str(vault), "--data-dir", str(data_dir)]
    runner = CliRunner()
    done = runner.invoke(
        app, ["promote", "zorb", "--title", "../x", "--folder", "UE", "--json", *where]
    )
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert payload == {
        "path": "Saved/UE/x.md",
        "absolute_path": str(vault / "Saved/UE/x.md"),
        "indexed": True,
    }
    assert vault_index.manifest.note("Saved/UE/x.md") is not None

    refused = runner.invoke(app, ["promote", "zorb", "--folder", "../../etc", *where])
    assert refused.exit_code == 1 and "must be a relative path" in refused.output
    unknown = runner.invoke(app, ["promote", "nope", *where])
    assert unknown.exit_code == 1 and "no answer with id" in unknown.output


def test_a_web_sources_page_is_linked_by_its_title_and_section() -> None:
    """A page of a web source beside the vault (issue 42): its link names the page and the
    section, and goes to the URL (with the section's anchor); a URL without a title is bare."""
    page = {
        "kind": "web",
        "url": "http://127.0.0.1:8123/docs/install.html#troubleshooting",
        "title": "Installation [Widget] docs",
        "heading": "Installation > Troubleshooting",
        "collection": "widget",
        "source_kind": "web",
        "chunk_id": "c9",
        "doc_id": "c9",
    }
    bare = {"kind": "web", "url": "https://example.org/a_(b)", "title": "", "doc_id": "w"}
    answer = dataclasses.replace(ANSWER, citations=[page, bare, {**page, "title": "Again"}])
    text = render_note(answer, None, dt.datetime(2026, 7, 1, 12, 0))
    head, body = text.split("---\n", 2)[1:]
    assert yaml.safe_load(head)["web_sources"] == [page["url"], bare["url"]]
    sources = body.split("## Sources", 1)[1].strip().splitlines()
    assert sources == [
        r"- [Installation \[Widget\] docs › Troubleshooting]"
        "(<http://127.0.0.1:8123/docs/install.html#troubleshooting>)",
        "- <https://example.org/a_(b)>",
    ]
