"""Code search finds the file that implements (issue 27, `retrieval/code_files.py`): a header's
declaration ranks its definition with it, tests and prose go after the code when close; and the
code kind's own chunker version re-chunks code files only. A real `git init` checkout of
generated files, real tree-sitter, real Chroma and BM25, the hash embedder."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.chunking.pipeline import KIND_VERSIONS_META, stale_kinds
from vault_rag.index.updates.indexer import Indexer
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval import code_files
from vault_rag.retrieval.hybrid import hybrid_search, search_options
from vault_rag.serving.context import open_index
from vault_rag.settings import Settings
from vault_rag.sources.code import kind as code_kind
from vault_rag.sources.code.kind import CodeKind, code_units
from vault_rag.sources.markdown import MarkdownKind
from vault_rag.sources.registry import SourceRegistry

from index_helpers import vault_with_code_source

# A public header in the zlib style: the prototype, then its documentation (the words a user
# asks with); the definition is terse and lives in another folder.
HEADER = """\
#ifndef CODEC_H
#define CODEC_H

/* codec.h -- interface of the codec library */

int codec_flush_window(struct codec_stream *strm, int mode);
/*
   codec_flush_window pushes every pending compressed byte of the sliding window out to the
   output file descriptor, then empties the window so the next block starts clean. The
   pending compressed bytes are written in one call when the descriptor accepts them.
*/

int codec_reset(struct codec_stream *strm);
/* codec_reset forgets the stream state. */

#endif
"""
SOURCE = """\
#include "codec.h"

int codec_flush_window(struct codec_stream *strm, int mode)
{
    int n = strm->have;
    while (n > 0) { n -= put(strm->fd, strm->out, n); }
    strm->have = 0;
    return mode;
}

int codec_reset(struct codec_stream *strm)
{
    strm->have = 0;
    return 0;
}
"""
# A .h/.c pair: the header's struct and its comment carry the words, the source the code.
RING_H = """\
/* A ring buffer of log records: the writer appends records at the head, the reader
   consumes them at the tail, and the buffer wraps around when it reaches the end. */
struct ring_buffer {
    int head;   /* where the writer appends the next log record */
    int tail;   /* where the reader consumes */
};
"""
RING_C = """\
#include "ring.h"

int ring_next(struct ring_buffer *ring, int size)
{
    return (ring->head + 1) % size;
}
"""
NOTES = {"Reading list.md": "# Reading list\n\nA book about bread and one about boats.\n"}


def _repo(root: Path) -> Path:
    repo = root / "codec"
    (repo / "include").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "include" / "codec.h").write_text(HEADER, encoding="utf-8")
    (repo / "src" / "codec.c").write_text(SOURCE, encoding="utf-8")
    (repo / "src" / "ring.h").write_text(RING_H, encoding="utf-8")
    (repo / "src" / "ring.c").write_text(RING_C, encoding="utf-8")
    for i in range(30):  # other files, so BM25 statistics mean something
        (repo / "src" / f"part{i}.c").write_text(
            f"/* Part {i} of the table. */\nint part_{i}(int x)\n{{\n    return x + {i};\n}}\n",
            encoding="utf-8",
        )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


@pytest.fixture(scope="module")
def codec(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultIndex]:
    root = tmp_path_factory.mktemp("codefiles")
    vault = root / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    with vault_with_code_source(vault, _repo(root), root / "data", "codec") as (_, _, source):
        yield source


QUESTION = "which function pushes the pending compressed bytes out to the file descriptor"


def _files(index: VaultIndex, question: str) -> list[tuple[str, str]]:
    options = search_options(Settings(embeddings="hash"), k=10)
    return [(r.note_path, r.symbol or "") for r in hybrid_search(index, question, options)]


def test_header_units_list_what_they_declare_and_the_comment_after_it() -> None:
    units = code_units("include/codec.h", HEADER, ChunkOptions(target_min=10, target_max=40))
    declares = {u.line_start: u.extra.get("declares") for u in units}
    prototype = next(u for u in units if "int codec_flush_window(" in u.text)
    assert prototype.extra["declares"] == ["codec_flush_window"]
    # the documentation after the prototype, in windows of its own, lists the prototype too
    documented = [u for u in units if "output file descriptor" in u.text]
    assert documented and all("codec_flush_window" in u.extra["declares"] for u in documented)
    assert any(names == ["codec_reset"] for names in declares.values())
    # a source file's units declare nothing (definitions are symbols)
    assert all("declares" not in u.extra for u in code_units("src/codec.c", SOURCE, ChunkOptions()))


def test_the_definition_ranks_with_the_header_declaration_that_matched(codec, monkeypatch) -> None:
    ranked = _files(codec, QUESTION)
    assert ranked[0] == ("src/codec.c", "codec_flush_window")
    files = list(dict.fromkeys(path for path, _ in ranked))
    assert files[:2] == ["src/codec.c", "include/codec.h"]  # the header that matched next
    # without the rule the header's documentation is first: the test measures the rule
    monkeypatch.setattr("vault_rag.retrieval.hybrid.rank_code_files", lambda i, f, c: [])
    assert _files(codec, QUESTION)[0][0] == "include/codec.h"


def test_a_header_and_its_source_file_rank_together_the_source_first(codec, monkeypatch) -> None:
    question = "ring buffer where the writer appends log records and the reader consumes them"
    files = list(dict.fromkeys(path for path, _ in _files(codec, question)))
    assert files[:2] == ["src/ring.c", "src/ring.h"]
    monkeypatch.setattr("vault_rag.retrieval.hybrid.rank_code_files", lambda i, f, c: [])
    assert _files(codec, question)[0][0] == "src/ring.h"  # the header's words alone


def test_an_ambiguous_name_lends_nothing(codec) -> None:
    table = code_files.definitions_of(codec)
    assert table["codec_flush_window"] == [("src/codec.c", table["codec_flush_window"][0][1])]
    final = {"h": 1.0}
    header = next(
        c for c in codec.manifest.note_chunks("include/codec.h") if c.extra.get("declares")
    )
    chunks = {"h": header}
    twice = {name: [("a.c", "x"), ("b.c", "y")] for name in header.extra["declares"]}
    code_files._DEFINITIONS[codec] = (codec.manifest.revision(), twice)
    try:
        assert code_files.rank_code_files(codec, final, chunks) == []
        assert final == {"h": 1.0}  # a header unit is code, not a test or prose: unchanged
    finally:
        code_files._DEFINITIONS.pop(codec, None)


def test_lent_evidence_adds_to_a_definitions_own(codec) -> None:
    """A definition that matched on its own and is pointed at by a matching declaration ranks
    above a file that matched better alone (evidence adds up, as RRF adds lists); one that was
    no candidate is added just above the declaration."""
    header = next(
        c for c in codec.manifest.note_chunks("include/codec.h") if c.extra.get("declares")
    )
    source = {c.extra.get("symbol"): c for c in codec.manifest.note_chunks("src/codec.c")}
    other = codec.manifest.note_chunks("src/part3.c")[0]
    flush, reset = source["codec_flush_window"], source["codec_reset"]
    chunks = {header.id: header, flush.id: flush, other.id: other}
    final = {header.id: 0.10, flush.id: 0.05, other.id: 0.12}
    added = code_files.rank_code_files(codec, final, chunks)
    assert final[flush.id] == pytest.approx(0.15, abs=1e-5)  # 0.05 own + 0.10 lent
    assert final[flush.id] > final[other.id] > final[header.id]
    if "codec_reset" in header.extra["declares"]:  # the window holding both prototypes
        assert added == [reset.id] and 0.10 < final[reset.id] < 0.1001
    else:
        assert added == []


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("db/db_impl.cc", False),
        ("db/db_test.cc", True),
        ("test/infcover.c", True),
        ("tests/test_sync.py", True),
        ("src/app.test.ts", True),
        ("src/FooTest.java", True),
        ("util/env_posix_unittest.cc", True),
        ("src/latest.c", False),
        ("src/contest/rules.c", False),
    ],
)
def test_test_files_are_told_by_their_path(path: str, test: bool) -> None:
    assert code_files.is_test_path(path) is test


@pytest.mark.parametrize(
    ("path", "tested"),
    [
        ("util/bloom_test.cc", ["util/bloom.cc"]),
        ("util/env_posix_unittest.cc", ["util/env_posix.cc"]),
        ("test_sync.py", ["sync.py"]),
        ("src/app.test.ts", ["src/app.ts"]),
        ("src/app.spec.ts", ["src/app.ts"]),
        ("src/FooTest.java", ["src/Foo.java"]),
        ("db/db_impl.cc", []),
        ("src/latest.c", []),
    ],
)
def test_a_test_file_names_the_file_it_tests(path: str, tested: list[str]) -> None:
    assert code_files.tested_by(path) == tested


def test_tests_and_prose_of_a_code_collection_give_way_to_code_and_notes_never_do(codec) -> None:
    by_path = {
        path: codec.manifest.note_chunks(path)[0] for path in ("src/codec.c", "include/codec.h")
    }
    assert all(code_files.role_factor(c) == 1.0 for c in by_path.values())
    code = by_path["src/codec.c"]
    as_test = type(code)(**{**code.__dict__, "note_path": "src/codec_test.c"})
    as_prose = type(code)(**{**code.__dict__, "note_path": "doc/design.md"})
    assert code_files.role_factor(as_test) == code_files.role_factor(as_prose) == 0.9
    note = type(code)(**{**code.__dict__, "note_path": "notes/x_test.md", "extra": {}})
    assert code_files.role_factor(note) == 1.0  # a vault's note is never a code unit


def test_a_code_chunker_version_rechunks_code_files_and_leaves_notes_alone(
    tmp_path: Path, monkeypatch
) -> None:
    """One index holding notes and code (the kinds of both registries): bumping the code
    kind's own version re-chunks every code file on the next run and no note; the global
    pipeline signature does not move."""
    root = _repo(tmp_path)
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    settings = Settings(vault=root, data_dir=tmp_path / "data", embeddings="hash", llm_model=None)
    index = open_index(settings)
    try:

        def run() -> tuple[int, set[str]]:
            # (Markdown read as notes: a code tree reads its .md files too, as line windows)
            registry = SourceRegistry([CodeKind(), MarkdownKind()])
            before = {p: [c.id for c in index.manifest.note_chunks(p)] for p in NOTES}
            summary = Indexer(index, sources=registry).run()
            after = {p: [c.id for c in index.manifest.note_chunks(p)] for p in NOTES}
            assert before == after or not any(before.values())
            return summary.notes_changed, set(index.manifest.notes())

        changed, files = run()
        code = {p for p in files if p.endswith((".c", ".h"))}
        assert changed == len(files) == len(code) + len(NOTES)
        pipeline = index.manifest.get_meta("pipeline")
        assert run()[0] == 0  # nothing changed: nothing re-chunked

        monkeypatch.setattr(CodeKind, "version", code_kind.CODE_UNITS_VERSION + "-next")
        notes_before = {p: index.manifest.note(p) for p in NOTES}
        changed, _ = run()
        assert changed == len(code)  # every code file, and not one note
        assert {p: index.manifest.note(p) for p in NOTES} == notes_before
        assert index.manifest.get_meta("pipeline") == pipeline
        assert stale_kinds(index.manifest.get_meta(KIND_VERSIONS_META), {"code": "x"}) == {"code"}
        assert run()[0] == 0  # recorded: the next run has nothing to do
    finally:
        index.close()


def test_an_index_from_before_kind_versions_rechunks_its_code_once() -> None:
    assert stale_kinds(None, {"code": "1"}) == {"code"}
    assert stale_kinds('{"code": "1"}', {"code": "1"}) == frozenset()
    assert stale_kinds("not json", {"code": "1"}) == {"code"}
    assert stale_kinds(None, {}) == frozenset()  # a vault of notes: nothing is ever stale
