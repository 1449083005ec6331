"""LexicalIndex: BM25 over SQLite-stored tokens, persisted snapshot, filters, concurrency."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import pytest

from vault_rag.index.bm25 import lexical
from vault_rag.index.bm25.lexical import SNAPSHOT_DIR, LexicalIndex
from vault_rag.index.bm25.postings import Postings
from vault_rag.index.bm25.reference import FastBM25

DOCS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "ue/materials.md#params",
        "材质参数可以在材质实例里修改，运行时用 UMaterialInstanceDynamic 设置标量参数和向量参数。",
        {"note_path": "UE/Rendering/materials.md", "tags": ["#UE/rendering", "material"]},
    ),
    (
        "ue/spawn.md#spawn",
        "在 BeginPlay 中调用 GetWorld()->SpawnActor<AEnemy>() 生成敌人角色。",
        {"note_path": "UE/Gameplay/spawn.md", "tags": ["ue/gameplay"]},
    ),
    (
        "ue/collision.md#intro",
        "UPrimitiveComponent 负责碰撞与渲染；碰撞通道决定哪些物体会互相阻挡。",
        {"note_path": "UE/collision.md", "tags": ["UE"]},
    ),
    (
        "ue5/nanite.md#intro",
        "Nanite virtualized geometry streams only the clusters that are visible on screen.",
        {"note_path": "UE5/nanite.md", "tags": ["rendering"]},
    ),
    (
        "python/venv.md#setup",
        "Create a virtual environment with python -m venv, then install packages with pip.",
        {"note_path": "Python/venv.md", "tags": ["python"]},
    ),
    (
        "cooking/noodles.md#recipe",
        "牛肉面的做法：先炖牛肉，再煮面条，最后加葱花和辣椒油。",
        {"note_path": "Life/noodles.md", "tags": []},
    ),
]


def top(ix: LexicalIndex, query: str, **kwargs: Any) -> str | None:
    hits = ix.search(query, **kwargs)
    return hits[0][0] if hits else None


@pytest.fixture
def ix(tmp_path: Path) -> LexicalIndex:
    index = LexicalIndex(tmp_path)
    index.upsert(DOCS)
    yield index  # type: ignore[misc]
    index.close()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("材质参数", "ue/materials.md#params"),
        ("怎么修改材质的参数？", "ue/materials.md#params"),
        ("生成敌人", "ue/spawn.md#spawn"),
        ("碰撞通道", "ue/collision.md#intro"),
        ("牛肉面怎么做", "cooking/noodles.md#recipe"),
        ("virtual environment pip", "python/venv.md#setup"),
        ("visible clusters", "ue5/nanite.md#intro"),
        # Unreal identifiers: whole name, without the type prefix, and by part.
        ("UPrimitiveComponent", "ue/collision.md#intro"),
        ("PrimitiveComponent", "ue/collision.md#intro"),
        ("SpawnActor", "ue/spawn.md#spawn"),
        ("spawn", "ue/spawn.md#spawn"),
        ("BeginPlay", "ue/spawn.md#spawn"),
        ("MaterialInstanceDynamic", "ue/materials.md#params"),
    ],
)
def test_finds_the_right_chunk(ix: LexicalIndex, query: str, expected: str) -> None:
    assert top(ix, query) == expected


def test_scores_are_sorted_positive_and_only_matching(ix: LexicalIndex) -> None:
    hits = ix.search("碰撞 材质 pip")
    ids = [h[0] for h in hits]
    assert set(ids) == {"ue/collision.md#intro", "ue/materials.md#params", "python/venv.md#setup"}
    scores = [h[1] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert len(ix.search("碰撞 材质 pip", k=2)) == 2
    assert ix.search("碰撞", k=0) == []


def test_empty_and_unknown_queries(ix: LexicalIndex, tmp_path: Path) -> None:
    assert ix.search("") == []
    assert ix.search("   ，。！") == []
    assert ix.search("the of 的 了 是") == []  # stop words only
    assert ix.search("quaternion") == []  # not in the corpus
    with LexicalIndex(tmp_path / "empty") as empty:
        assert empty.count() == 0 and empty.ids() == set()
        assert empty.search("材质") == []


def test_upsert_replaces(ix: LexicalIndex) -> None:
    chunk_id, _, meta = DOCS[5]
    ix.upsert([(chunk_id, "Quaternion rotation avoids gimbal lock.", meta)])
    assert ix.count() == len(DOCS)
    assert ix.search("牛肉面") == []
    assert top(ix, "quaternion gimbal") == chunk_id


def test_delete(ix: LexicalIndex) -> None:
    assert ix.delete(["ue/spawn.md#spawn", "no-such-id"]) == 1
    assert "ue/spawn.md#spawn" not in ix.ids()
    assert ix.search("SpawnActor") == []
    assert ix.delete([]) == 0
    assert ix.count() == len(DOCS) - 1
    ix.clear()
    assert ix.count() == 0 and ix.search("碰撞") == []


def test_folder_filter_is_a_path_prefix(ix: LexicalIndex) -> None:
    query = "材质 碰撞 spawn nanite pip"
    everything = {h[0] for h in ix.search(query)}
    assert len(everything) == 5
    ue = {h[0] for h in ix.search(query, folder="UE")}
    assert ue == {"ue/materials.md#params", "ue/spawn.md#spawn", "ue/collision.md#intro"}
    assert {h[0] for h in ix.search(query, folder="/UE/Gameplay/")} == {"ue/spawn.md#spawn"}
    assert {h[0] for h in ix.search(query, folder="UE5")} == {"ue5/nanite.md#intro"}
    assert ix.search(query, folder="Nope") == []
    assert {h[0] for h in ix.search(query, folder="")} == everything


def test_tag_filter_membership_case_and_nesting(ix: LexicalIndex) -> None:
    query = "材质 碰撞 spawn nanite pip"
    # "ue" matches ue, ue/rendering and ue/gameplay; tags compare case-insensitively.
    ue = {h[0] for h in ix.search(query, tag="#ue")}
    assert ue == {"ue/materials.md#params", "ue/spawn.md#spawn", "ue/collision.md#intro"}
    assert {h[0] for h in ix.search(query, tag="UE/Rendering")} == {"ue/materials.md#params"}
    assert {h[0] for h in ix.search(query, tag="rendering")} == {"ue5/nanite.md#intro"}
    assert {h[0] for h in ix.search(query, tag="python", folder="UE")} == set()
    both = ix.search(query, tag="ue/gameplay", folder="UE")
    assert [h[0] for h in both] == ["ue/spawn.md#spawn"]


def test_filters_keep_bm25_scores(ix: LexicalIndex) -> None:
    unfiltered = dict(ix.search("碰撞 材质"))
    filtered = dict(ix.search("碰撞 材质", folder="UE/Rendering"))
    assert filtered == {"ue/materials.md#params": unfiltered["ue/materials.md#params"]}


def test_metadata_and_ids_persist_across_reopen(tmp_path: Path) -> None:
    with LexicalIndex(tmp_path) as a:
        a.upsert(DOCS)
        before = a.search("碰撞 材质 spawn")
    with LexicalIndex(tmp_path) as b:
        assert b.ids() == {d[0] for d in DOCS}
        assert b.count() == len(DOCS)
        assert b.search("碰撞 材质 spawn") == before
        assert top(b, "材质参数", tag="material") == "ue/materials.md#params"


def test_reopen_loads_saved_snapshot_without_rebuilding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LexicalIndex(tmp_path) as a:
        a.upsert(DOCS)
        expected = a.search("碰撞 材质 UPrimitiveComponent")
    assert len([p for p in (tmp_path / SNAPSHOT_DIR).iterdir()]) == 1

    def no_rebuild(*args: object, **kwargs: object) -> None:
        raise AssertionError("rebuilt although a snapshot for this generation was saved")

    monkeypatch.setattr(Postings, "build", no_rebuild)
    with LexicalIndex(tmp_path) as b:
        assert b.search("碰撞 材质 UPrimitiveComponent") == expected


def test_incremental_update_after_reopen(tmp_path: Path) -> None:
    with LexicalIndex(tmp_path) as a:
        a.upsert(DOCS)
        a.search("warm up and save a snapshot")
    with LexicalIndex(tmp_path) as b:
        assert top(b, "材质参数") == "ue/materials.md#params"
        b.upsert([("new#1", "Chaos 物理引擎的破碎系统", {"note_path": "UE/chaos.md"})])
        b.delete([i for i, _, meta in DOCS if meta["note_path"] == "Life/noodles.md"])
        assert top(b, "破碎") == "new#1"
        assert b.search("牛肉面") == []
    with LexicalIndex(tmp_path) as c:
        assert top(c, "破碎") == "new#1"
        assert c.search("牛肉面") == []
        assert c.count() == len(DOCS)
    # Old snapshots are cleaned up: only the current generation's remains.
    assert len([p for p in (tmp_path / SNAPSHOT_DIR).iterdir()]) == 1


def test_sees_writes_from_another_index_object(tmp_path: Path) -> None:
    """Two objects on one directory behave like two processes: the reader notices the writer's
    generation bump even though its own in-memory index is already built."""
    reader, writer = LexicalIndex(tmp_path), LexicalIndex(tmp_path)
    writer.upsert(DOCS[:2])
    assert reader.search("碰撞") == []
    writer.upsert(DOCS[2:])
    assert top(reader, "碰撞") == "ue/collision.md#intro"
    writer.delete(["ue/collision.md#intro"])
    assert reader.search("碰撞") == []
    reader.close()
    writer.close()


def test_second_process_reads_first_process_writes(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from vault_rag.index.bm25.lexical import LexicalIndex\n"
        "ix = LexicalIndex(sys.argv[1])\n"
        "ix.upsert([('p#1', sys.argv[2], {'note_path': 'P/p.md', 'tags': ['proc']})])\n"
        "print(ix.search(sys.argv[3]))\n"
        "ix.close()\n"
    )
    with LexicalIndex(tmp_path) as mine:
        mine.upsert(DOCS)
        assert mine.search("蓝图接口") == []
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path), "蓝图接口的消息调用", "蓝图"],
            check=True,
            capture_output=True,
        )
        assert top(mine, "蓝图接口") == "p#1"
        assert top(mine, "蓝图", tag="proc", folder="P") == "p#1"
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), "蓝图接口的消息调用", "碰撞通道"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "ue/collision.md#intro" in done.stdout
    assert done.stderr == ""  # no progress bars, dictionary-loading chatter or warnings


def test_query_word_known_to_vocab_but_in_no_current_chunk(tmp_path: Path) -> None:
    with LexicalIndex(tmp_path) as ix:
        ix.upsert([("a", "alpha", {"note_path": "a.md"})])
        ix.upsert([("b", "omega", {"note_path": "b.md"})])  # "omega" gets the highest vocab id
        ix.delete(["b"])
        assert ix.search("omega") == []
        assert [h[0] for h in ix.search("omega alpha")] == ["a"]


def test_known_is_the_vocabulary_of_the_live_chunks(tmp_path: Path) -> None:
    """Routing compares which question words each collection's index knows: a word of a
    deleted chunk is no longer known, and stop words never were."""
    with LexicalIndex(tmp_path) as ix:
        ix.upsert([("a", "alpha beta", {"note_path": "a.md"})])
        ix.upsert([("b", "omega", {"note_path": "b.md"})])
        assert ix.known(["alpha", "omega", "gamma"]) == {"alpha", "omega"}
        ix.delete(["b"])
        assert ix.known(["alpha", "omega"]) == {"alpha"}
        assert ix.known(["the"]) == frozenset() and ix.known([]) == frozenset()


def test_corrupt_snapshot_is_rebuilt(tmp_path: Path) -> None:
    with LexicalIndex(tmp_path) as a:
        a.upsert(DOCS)
        expected = a.search("碰撞 材质")
    for path in (tmp_path / SNAPSHOT_DIR).rglob("*.npy"):
        path.write_bytes(b"garbage")
    with LexicalIndex(tmp_path) as b:
        assert b.search("碰撞 材质") == expected


def test_many_small_upserts(tmp_path: Path) -> None:
    rng = random.Random(7)
    words = ["材质", "参数", "蓝图", "组件", "碰撞", "渲染", "光照", "阴影", "动画", "骨骼"]

    def marker(i: int) -> str:  # one plain token per chunk: qxaaa, qxaab, ... (no digits)
        return "qx" + "".join(chr(97 + int(d)) for d in f"{i:03d}")

    with LexicalIndex(tmp_path) as ix:
        for i in range(150):
            text = "".join(rng.choices(words, k=8)) + f" {marker(i)}"
            ix.upsert([(f"c{i}", text, {"note_path": f"n{i % 10}.md"})])
            if i % 10 == 0:
                assert [h[0] for h in ix.search(marker(i))] == [f"c{i}"]
        for i in range(0, 150, 3):
            ix.delete([f"c{i}"])
        ix.upsert([("c1", "替换后的内容 replaced", {"note_path": "n1.md"})])
        assert ix.count() == 100
        assert [h[0] for h in ix.search(marker(149))] == ["c149"]
        assert ix.search(marker(0)) == [] and ix.search(marker(3)) == []
        assert ix.search(marker(1)) == [] and top(ix, "replaced") == "c1"
        both = ix.search(f"{marker(7)} {marker(8)}", folder="n7.md")
        assert [h[0] for h in both] == ["c7"]
        assert len(ix.search("材质", k=200)) == len({h[0] for h in ix.search("材质", k=200)})


def test_writes_are_caught_up_without_a_rebuild(
    ix: LexicalIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write costs the rows it changed: the next search catches up from the change log
    instead of building the whole index again; an identical re-upsert costs nothing at all."""
    ix.search("材质")
    builds: list[int] = []
    catch_ups: list[int] = []
    original = Postings.with_changes

    def counting(self: Postings, *args: Any, **kwargs: Any) -> Postings:
        catch_ups.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Postings, "build", lambda *a, **k: builds.append(1))
    monkeypatch.setattr(Postings, "with_changes", counting)
    ix.upsert(DOCS)  # identical rows: nothing written, nothing to catch up
    ix.search("材质")
    assert builds == [] and catch_ups == []
    ix.upsert([(DOCS[0][0], DOCS[0][1], {**DOCS[0][2], "tags": ["changed"]})])
    assert top(ix, "材质", tag="changed") == DOCS[0][0]
    assert builds == [] and catch_ups == [1]
    ix.delete([DOCS[1][0]])
    assert ix.search("SpawnActor") == []
    assert builds == [] and catch_ups == [1, 1]


def _reference_scores(docs: dict[str, list[str]], query: list[str]) -> dict[str, float]:
    """FastBM25 (the static engine this one replaced) built afresh over `docs`."""
    ids = sorted(docs)
    model = FastBM25()
    model.index([docs[i] for i in ids], show_progress=False)
    known = [t for t in dict.fromkeys(query) if t in model.vocab_dict]
    if not known or not ids:
        return {}
    scores = model.get_scores(known)
    return {i: float(s) for i, s in zip(ids, scores, strict=True) if s > 0}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_incremental_scores_equal_a_fresh_fastbm25_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Random upserts, replacements and deletes, searched after each step (so the postings are
    caught up, compacted and folded many times): every score equals FastBM25's over the
    current documents, as the same float — retrieval is unchanged by the engine swap."""
    from vault_rag.index.bm25 import postings

    monkeypatch.setattr(postings, "DELTA_MIN", 40)  # fold and compact often
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(60)] + ["材质", "参数", "蓝图", "碰撞"]
    current: dict[str, list[str]] = {}
    with LexicalIndex(tmp_path) as ix:
        for step in range(60):
            action = rng.random()
            if action < 0.65 or len(current) < 5:
                batch = {}
                for _ in range(rng.randint(1, 6)):
                    chunk_id = f"c{rng.randrange(80):02d}"
                    batch[chunk_id] = " ".join(rng.choices(words, k=rng.randint(0, 40)))
                ix.upsert([(i, text, {"note_path": f"n/{i}.md"}) for i, text in batch.items()])
                current.update({i: lexical.tokenize(text) for i, text in batch.items()})
            else:
                gone = rng.sample(sorted(current), k=min(len(current), rng.randint(1, 4)))
                ix.delete(gone)
                for i in gone:
                    current.pop(i)
            query = rng.sample(words, k=rng.randint(1, 6))
            got = dict(ix.search(" ".join(query), k=500))
            assert got == _reference_scores(current, lexical.tokenize(" ".join(query))), step


def test_a_second_object_catches_up_from_the_log_and_a_saved_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log serves other processes too: a reader built once follows another object's
    writes without rebuilding, and a fresh one loads the saved snapshot and catches up."""
    writer = LexicalIndex(tmp_path)
    writer.upsert(DOCS)
    writer.search("碰撞")  # builds and saves
    reader = LexicalIndex(tmp_path)
    assert top(reader, "碰撞通道") == "ue/collision.md#intro"  # loaded, not built
    monkeypatch.setattr(Postings, "build", lambda *a, **k: pytest.fail("rebuilt"))
    writer.upsert([("new#1", "Chaos 物理引擎的破碎系统", {"note_path": "UE/chaos.md"})])
    writer.delete(["ue/collision.md#intro"])
    assert top(reader, "破碎") == "new#1" and reader.search("碰撞通道") == []
    with LexicalIndex(tmp_path) as fresh:  # snapshot from before the writes + the log
        assert top(fresh, "破碎") == "new#1" and fresh.search("碰撞通道") == []
        assert fresh.search("材质 破碎 spawn") == reader.search("材质 破碎 spawn")
    reader.close()
    writer.close()


def test_persist_prunes_the_log_and_older_readers_reload(tmp_path: Path) -> None:
    """Saving a snapshot drops the tombstones it covers; a reader whose state is older than
    that can no longer catch up from the log, so it loads the snapshot and goes on from it."""
    old = LexicalIndex(tmp_path)
    old.upsert(DOCS)
    assert top(old, "牛肉面") == "cooking/noodles.md#recipe"
    with LexicalIndex(tmp_path) as other:
        other.delete(["cooking/noodles.md#recipe"])
        other.upsert([("x#1", "牛肉 炖 很久", {"note_path": "x.md"})])
        assert other.persist() is True
        assert other.persist() is False  # already on disk
        assert other._query("SELECT COUNT(*) FROM gone")[0][0] == 0
    assert [h[0] for h in old.search("牛肉面")] == ["x#1"]
    assert len(list((tmp_path / SNAPSHOT_DIR).iterdir())) == 1
    old.close()


def test_database_from_before_the_change_log_is_migrated(tmp_path: Path) -> None:
    import sqlite3

    with LexicalIndex(tmp_path) as a:
        a.upsert(DOCS)
    db = sqlite3.connect(tmp_path / lexical.DB_FILE)
    db.executescript(  # the old layout: docs without `gen`, no `gone`, no floor
        """CREATE TABLE old (id TEXT PRIMARY KEY, note_path TEXT, tags TEXT NOT NULL,
            toks BLOB NOT NULL, meta TEXT NOT NULL);
        INSERT INTO old SELECT id, note_path, tags, toks, meta FROM docs;
        DROP TABLE docs; ALTER TABLE old RENAME TO docs; DROP TABLE gone;
        DELETE FROM meta WHERE key='floor';"""
    )
    db.close()
    shutil.rmtree(tmp_path / SNAPSHOT_DIR, ignore_errors=True)
    with LexicalIndex(tmp_path) as b:
        assert top(b, "碰撞通道") == "ue/collision.md#intro"
        b.delete(["ue/collision.md#intro"])
        b.upsert([("n#1", "碰撞通道 新的", {"note_path": "n.md"})])
        assert [h[0] for h in b.search("碰撞通道")] == ["n#1"]


def test_fast_builder_matches_stock_bm25s() -> None:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    corpus = [rng.choices(words, k=rng.randint(0, 80)) for _ in range(600)]
    stock, fast = bm25s.BM25(), FastBM25()
    stock.index(corpus, show_progress=False)
    fast.index(corpus, show_progress=False)
    for query in (["w1"], ["w2", "w5", "w9"], words[:60], ["w3", "w3"]):
        np.testing.assert_allclose(fast.get_scores(query), stock.get_scores(query), rtol=1e-5)


def test_index_scores_equal_stock_bm25s_over_the_same_tokens(ix: LexicalIndex) -> None:
    corpus = [lexical.tokenize(text) for _, text, _ in sorted(DOCS)]
    stock = bm25s.BM25()
    stock.index(corpus, show_progress=False)
    query = "碰撞 材质 spawn"
    expected = stock.get_scores(list(dict.fromkeys(lexical.tokenize(query))))
    got = dict(ix.search(query))
    for (chunk_id, _, _), score in zip(sorted(DOCS), expected, strict=True):
        assert got.get(chunk_id, 0.0) == pytest.approx(float(score), rel=1e-5)


def test_ties_are_broken_by_id(tmp_path: Path) -> None:
    with LexicalIndex(tmp_path) as ix:
        ix.upsert([(f"d{i}", "同样的内容 same text", {"note_path": "x.md"}) for i in range(5)])
        assert [h[0] for h in ix.search("same", k=3)] == ["d0", "d1", "d2"]


def test_recreated_database_ignores_old_snapshot(tmp_path: Path) -> None:
    with LexicalIndex(tmp_path) as a:
        a.upsert(DOCS)
        a.search("碰撞")
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"{lexical.DB_FILE}{suffix}").unlink(missing_ok=True)
    with LexicalIndex(tmp_path) as b:  # fresh database, generation counts from 0 again
        b.upsert([("x#1", "碰撞体积", {"note_path": "x.md"})])
        assert [h[0] for h in b.search("碰撞")] == ["x#1"]


def test_tokenizer_change_clears_stale_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LexicalIndex(tmp_path) as a:
        a.upsert(DOCS)
    monkeypatch.setattr(lexical, "TOKENIZER_VERSION", "test-next")
    with LexicalIndex(tmp_path) as b:
        assert b.count() == 0 and b.search("碰撞") == []
        b.upsert(DOCS)
        assert top(b, "碰撞通道") == "ue/collision.md#intro"


def test_concurrent_readers_with_one_writer(tmp_path: Path) -> None:
    with LexicalIndex(tmp_path) as ix:
        ix.upsert(DOCS)
        errors: list[BaseException] = []
        stop = threading.Event()

        def read() -> None:
            try:
                while not stop.is_set():
                    hits = ix.search("材质参数")
                    assert hits and hits[0][0] == "ue/materials.md#params"
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        readers = [threading.Thread(target=read) for _ in range(4)]
        for t in readers:
            t.start()
        for i in range(40):
            ix.upsert([(f"w{i}", f"写入 {i} 次 rendering", {"note_path": "w.md"})])
        stop.set()
        for t in readers:
            t.join()
        assert errors == []
        assert ix.count() == len(DOCS) + 40
        assert len(ix.search("写入", k=100)) == 40
