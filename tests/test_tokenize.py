"""Tokeniser for mixed Chinese / English / Unreal Engine text."""

from __future__ import annotations

import subprocess
import sys

from vault_rag.index.bm25.tokenize import STOP_WORDS, tokenize


def test_chinese_is_segmented_into_words() -> None:
    assert tokenize("材质参数") == ["材质", "参数"]
    tokens = tokenize("虚幻引擎的蓝图编辑器")
    assert {"虚幻", "引擎", "蓝图", "编辑器"} <= set(tokens)
    assert "虚幻引擎的蓝图编辑器" not in tokens


def test_search_mode_emits_sub_words_of_compounds() -> None:
    # Plain jieba cut keeps 数据库系统 whole; search mode must also give its parts (recall).
    tokens = tokenize("数据库系统")
    assert {"数据库系统", "数据库", "系统"} <= set(tokens)


def test_identifier_is_kept_whole_and_split_into_parts() -> None:
    tokens = tokenize("UPrimitiveComponent")
    assert tokens[0] == "uprimitivecomponent"
    assert {"primitivecomponent", "primitive", "component"} <= set(tokens)
    assert "u" not in tokens  # single-letter type prefix is noise


def test_ue_code_in_chinese_prose() -> None:
    tokens = tokenize("在BeginPlay里调用GetWorld()->SpawnActor<T>()，并给属性加UPROPERTY()")
    for expected in ("beginplay", "begin", "play", "getworld", "world", "spawnactor", "spawn"):
        assert expected in tokens
    assert {"actor", "uproperty", "调用", "属性"} <= set(tokens)
    assert not {"t", "(", ")", "->", "<", ">", "，"} & set(tokens)


def test_snake_case_acronyms_and_digits() -> None:
    assert tokenize("my_snake_case") == ["my_snake_case", "snake", "case"]  # "my" is a stop word
    assert tokenize("HTTPServer") == ["httpserver", "http", "server"]
    assert tokenize("UE5") == ["ue5", "ue", "5"]
    assert tokenize("TArray<FVector>") == ["tarray", "array", "fvector", "vector"]


def test_cpp_numbers_and_punctuation() -> None:
    assert tokenize("C++ 和 C# 版本 5.3！") == ["c++", "c#", "版本", "5.3"]
    assert tokenize("  ,.;!?，。、…  ") == []
    assert tokenize("") == []


def test_stop_words_are_removed() -> None:
    assert tokenize("the actor is in the world") == ["actor", "world"]
    tokens = tokenize("这是我们的材质，它了")
    assert "材质" in tokens
    assert not {"的", "了", "是", "我们", "它", "这是"} & set(tokens)
    assert {"的", "了", "是", "the", "is"} <= STOP_WORDS
    # Question scaffolding goes; the content words stay.
    assert tokenize("想做一个按住半秒才会触发的操作，该怎么配置？") == [
        "按住",
        "半秒",
        "触发",
        "操作",
        "配置",
    ]


def test_light_plural_stemming() -> None:
    assert tokenize("actors bodies meshes classes caches") == [
        "actor",
        "body",
        "mesh",
        "class",
        "cache",
    ]
    assert tokenize("status class axis") == ["status", "class", "axis"]
    # Parts are stemmed, the whole identifier is not.
    assert tokenize("GetActors") == ["getactors", "get", "actor"]


def test_case_and_full_width_are_normalised() -> None:
    assert tokenize("ＵＥ５") == tokenize("UE5")
    assert tokenize("BeginPlay") == ["beginplay", "begin", "play"]
    # A lower- or upper-case query still hits the whole identifier.
    assert tokenize("beginplay") == tokenize("BEGINPLAY") == ["beginplay"]


def test_deterministic() -> None:
    text = "材质参数 UPrimitiveComponent 中华人民共和国 GetWorld()->SpawnActor<T>() 5.3"
    assert tokenize(text) == tokenize(text)


def test_first_use_is_silent() -> None:
    """Loading the dictionary must print nothing (jieba logs to stderr by default)."""
    code = (
        "from vault_rag.index.bm25.tokenize import tokenize, tokenize_with\n"
        "tokenize('材质参数')\n"
        "tokenize_with('材质参数', 'jieba')\n"
    )
    try:
        import jieba  # noqa: F401
    except ImportError:
        code = code.replace("tokenize_with('材质参数', 'jieba')\n", "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == ""
    assert done.stderr == ""
