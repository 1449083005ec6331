"""Benchmark the lexical index: tokeniser backends, index build/load, edits, query latency.

    python -m benchmarks lexical [--sizes 1000,10000,50000] [--repeats 3]

Chunks are generated (seeded) mixed Chinese / Unreal identifiers / English, ~260 characters
each. Each row is a median over `--repeats` runs (one run for corpora over 20k chunks) with its
ratio to the baseline named in the section header. About 1.5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import bm25s
import numpy as np
from bm25s.tokenization import Tokenized

from benchmarks.common import wall_median
from vault_rag.index.bm25 import lexical
from vault_rag.index.bm25.lexical import SNAPSHOT_DIR, LexicalIndex
from vault_rag.index.bm25.reference import FastBM25, FlatCorpus
from vault_rag.index.bm25.tokenize import _load, tokenize_with

_ZH = """虚幻 引擎 材质 参数 蓝图 编辑器 组件 渲染 管线 光照 阴影 贴图 纹理 角色 移动 物理 碰撞
网格 骨骼 动画 状态机 调用 函数 变量 属性 实例 生成 销毁 游戏 模式 控制器 输入 映射 的 了 是 在 和
我们 可以 需要 通过 使用 数据库 系统 开发 工具 性能 优化 内存 线程 异步 加载 资源 打包 发布 平台
着色器 后处理 体积 雾 天空 大气 反射 全局 烘焙 服务器 客户端 同步 复制 网络 延迟 预测 插值 关卡
流送 地形 植被 粒子 特效 音频 界面 控件 事件 委托 接口 模板 指针 引用 垃圾 回收 序列化 构建 编译
链接 调试 断点 日志 崩溃 堆栈 性能分析 帧率 显存 带宽 批处理 实例化 剔除 遮挡 层级 细节 距离 场"""
_PARTS = """Actor Component Primitive Static Mesh Skeletal Anim Instance Character Movement Pawn
Controller Player Game Mode State World Level Material Dynamic Texture Render Target Scene
Capture Light Spot Point Directional Widget Button Text Block Slate Niagara System Emitter
Physics Body Collision Channel Trace Hit Result Spawn Begin Play End Tick Get Set Find Add
Remove Async Task Load Asset Object Class Subsystem Input Action Mapping Context Ability"""
_EN = """the actor is spawned when play begins and the component registers with the world so
collision queries return hits for every primitive we render with dynamic materials and texture
parameters while the garbage collector tracks objects referenced by properties"""
ZH, PARTS, EN = _ZH.split(), _PARTS.split(), _EN.split()
MACROS = ["UPROPERTY()", "UFUNCTION(BlueprintCallable)", "GENERATED_BODY()", "UCLASS()", "C++"]


def make_chunk(rng: random.Random) -> str:
    out: list[str] = []
    while sum(len(p) for p in out) < 260:
        r = rng.random()
        if r < 0.7:
            out.append("".join(rng.choices(ZH, k=rng.randint(3, 8))) + rng.choice("，。、；"))
        elif r < 0.85:
            ident = rng.choice("UAF") + "".join(rng.choices(PARTS, k=rng.randint(1, 3)))
            out.append(f" {ident}::{rng.choice(['Get', 'Set', 'On'])}{rng.choice(PARTS)}() ")
        elif r < 0.95:
            out.append(" " + " ".join(rng.choices(EN, k=rng.randint(4, 10))) + ". ")
        else:
            out.append(f" {rng.choice(MACROS)} ")
    return "".join(out)


def make_query(rng: random.Random) -> str:
    return " ".join([*rng.choices(ZH, k=2), rng.choice(PARTS) + rng.choice(PARTS)])


def row(name: str, value: str, ratio: float | None = None) -> None:
    shown = "" if ratio is None else (f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x")
    print(f"  {name:<46} {value:>16} {shown:>10}")


def secs(value: float) -> str:
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"


def bench_tokenize(texts: list[str], repeats: int) -> None:
    if importlib.util.find_spec("jieba") is None:
        print("\n[tokenise] skipped: jieba is not installed (pip install jieba)")
        return
    print(f"\n[tokenise {len(texts):,} chunks]  baseline = jieba")
    for backend in ("jieba", "rjieba"):
        start = time.perf_counter()
        _load(backend)  # type: ignore[arg-type]
        row(f"{backend}: import + dictionary load", secs(time.perf_counter() - start))
    base = 0.0
    for backend in ("jieba", "rjieba"):
        took = wall_median(lambda b=backend: [tokenize_with(t, b) for t in texts], repeats)  # type: ignore[misc]
        base = base or took
        row(f"{backend}: tokenize()", f"{len(texts) / took:,.0f} chunks/s", base / took)
    same = sum(tokenize_with(t, "jieba") == tokenize_with(t, "rjieba") for t in texts)
    print(f"  identical token lists jieba vs rjieba: {same}/{len(texts)}")


def bench_index(texts: list[str], corpus: list[list[str]], n: int, repeats: int) -> None:
    reps = 1 if n > 20_000 else repeats
    print(f"\n[index {n:,} chunks]  baseline = stock bm25s index() (median of {reps})")
    stock = wall_median(lambda: bm25s.BM25().index(corpus[:n], show_progress=False), reps)
    row("stock bm25s.BM25.index() in memory", secs(stock), 1.0)
    fast = wall_median(lambda: FastBM25().index(corpus[:n], show_progress=False), reps)
    row("FastBM25.index() in memory", secs(fast), fast / stock)

    root = Path(tempfile.mkdtemp(prefix="bench_lexical_"))
    items = [
        (f"note{i // 8}.md#{i % 8}", texts[i], {"note_path": f"d{i % 20}/note{i // 8}.md"})
        for i in range(n)
    ]
    try:
        with LexicalIndex(root) as ix:
            row(
                "upsert all (SQLite, tokens precomputed)",
                secs(wall_median(lambda: ix.upsert(items), 1)),
            )

        def first_search(keep_snapshot: bool) -> None:
            if not keep_snapshot:
                shutil.rmtree(root / SNAPSHOT_DIR, ignore_errors=True)
            with LexicalIndex(root) as fresh:
                fresh.search("材质 参数")

        cold = wall_median(lambda: first_search(False), reps)
        row("open + rebuild from stored tokens + save", secs(cold), cold / stock)
        warm = wall_median(lambda: first_search(True), reps)
        row("open + load saved snapshot", secs(warm), warm / stock)
        retok = wall_median(lambda: [tokenize_with(t, "rjieba") for t in texts[:n]], 1)
        row("re-tokenise all text, rjieba (avoided)", secs(retok), retok / stock)

        rng = random.Random(n)
        old_root = root / "old-engine"

        def old_engine_edit() -> None:
            # What the first search after an edit cost before the postings (the old
            # `LexicalIndex._load`): every row read, bm25s' matrix rebuilt, saved in full.
            db = sqlite3.connect(root / lexical.DB_FILE)
            blobs = [r[0] for r in db.execute("SELECT toks FROM docs ORDER BY id")]
            vocab = dict(db.execute("SELECT token, id FROM vocab"))
            db.close()
            lengths = np.fromiter((len(b) // 4 for b in blobs), np.int64, len(blobs))
            flat = np.frombuffer(b"".join(blobs), dtype="<i4").astype(np.int64)
            model = FastBM25()
            model.index(Tokenized(ids=FlatCorpus(flat, lengths), vocab=vocab), show_progress=False)
            model.save(old_root, show_progress=False)

        old_edit = wall_median(old_engine_edit, reps)
        row("old engine per edit: FastBM25 rebuild + save", secs(old_edit), old_edit / stock)
        with LexicalIndex(root) as ix:
            ix.search("warm")
            chunk_id, text, meta = items[0]

            def edit_then_search() -> None:
                ix.upsert([(chunk_id, f"{text} 修改{rng.random()}", meta)])
                ix.search("材质 参数")

            edit = wall_median(edit_then_search, max(reps, 5))
            row("one upsert, then search (catch-up)", secs(edit), edit / stock)
            row("  … against the old engine's edit", "", edit / old_edit)
            bench_queries(ix, corpus[:n], [make_query(rng) for _ in range(200)])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_queries(ix: LexicalIndex, corpus: list[list[str]], queries: list[str]) -> None:
    model = FastBM25()
    model.index(corpus, show_progress=False)
    ids = [model.get_tokens_ids(list(dict.fromkeys(tokenize_with(q, "rjieba")))) for q in queries]
    samples = []
    for t in ids:
        start = time.perf_counter()
        np.argpartition(-model.get_scores_from_ids(t), 20)[:20]
        samples.append(time.perf_counter() - start)
    raw = statistics.median(samples)
    print("  -- query latency, median of 200; baseline = the old engine: bm25s scores + top-20")
    row("raw bm25s get_scores + argpartition", f"{raw * 1e3:.2f} ms", 1.0)
    for label, kwargs in (("search()", {}), ("search(folder=...)", {"folder": "d3"})):
        samples = []
        for q in queries:
            start = time.perf_counter()
            ix.search(q, 20, **kwargs)
            samples.append(time.perf_counter() - start)
        med = statistics.median(samples)
        row(label, f"{med * 1e3:.2f} ms", med / raw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokenize-chunks", type=int, default=2000)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(42)
    texts = [make_chunk(rng) for _ in range(max(sizes))]
    bench_tokenize(texts[: args.tokenize_chunks], args.repeats)

    start = time.perf_counter()
    corpus = [tokenize_with(t, "rjieba") for t in texts]
    took = time.perf_counter() - start
    mean = np.mean([len(c) for c in corpus])
    print(f"\n(tokenised {len(texts):,} chunks once: {took:.1f} s, {mean:.0f} tokens/chunk)")
    # Upserts below reuse these tokens, so the index rows measure storage + BM25, not jieba.
    cache = dict(zip(texts, corpus, strict=True))
    lexical.tokenize = lambda text: cache.get(text) or tokenize_with(text, "rjieba")  # type: ignore[assignment]
    for n in sizes:
        bench_index(texts, corpus, n, args.repeats)
    return 0
