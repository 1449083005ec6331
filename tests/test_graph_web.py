"""Web search through langchain-tavily against a local server speaking Tavily's API:
domain restriction, extract cleanup, document ids, failures that never raise."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from test_graph_helpers import ScriptedModel, chat_provider, collect, resources, shared_index
from vault_rag.graph.config import Resources
from vault_rag.graph.web import WebSearch, build_web_search, clean_web_text, domain_allowed
from vault_rag.settings import Settings

from fakes.openai_server import FakeOpenAIServer
from fakes.tavily_server import FakePage, FakeTavilyServer

PAGES = [
    FakePage(
        url="https://dev.epicgames.com/documentation/nanite",
        title="Nanite Virtualized Geometry",
        content="Nanite supports opaque materials; translucent materials are not supported.",
        raw_content=(
            "# Nanite\n\nNanite renders opaque geometry. [...] Translucent materials are not "
            "supported by Nanite.\n\n\n\n![diagram](https://img/x.png)\n[…] Masked materials work."
        ),
    ),
    FakePage(
        url="https://forums.unrealengine.com/t/nanite-translucency/1",
        title="Nanite and translucency",
        content="Forum thread: nanite translucent materials workaround.",
        raw_content="Use a separate non-Nanite mesh for translucent parts.",
    ),
    FakePage(
        url="https://random-blog.example.com/nanite",
        title="My nanite blog",
        content="Nanite translucent materials are totally supported (wrong).",
        raw_content="Wrong claims about nanite translucent materials.",
    ),
]
UE_DOMAINS = ["dev.epicgames.com", "forums.unrealengine.com"]


def search(server: FakeTavilyServer, query: str, **options: object):
    web = WebSearch(api_key=server.api_key, base_url=server.base_url, **options)  # type: ignore[arg-type]
    return asyncio.run(web.search(query))


def test_search_then_extract_with_domains_cleanup_and_ids():
    with FakeTavilyServer(PAGES) as server:
        result = search(server, "nanite translucent materials", include_domains=UE_DOMAINS)
        assert not result.error
        urls = [p.url for p in result.pages]
        assert set(urls) == {PAGES[0].url, PAGES[1].url}
        # The request carried the restriction, the key and the wrapper's parameters.
        body = server.requests_to("/search")[0].body
        assert body["include_domains"] == UE_DOMAINS and body["max_results"] == 5
        assert server.requests_to("/search")[0].headers["authorization"] == "Bearer tvly-test"
        extract = server.requests_to("/extract")[0].body
        assert set(extract["urls"]) == set(urls) and extract["query"]
        nanite = next(p for p in result.pages if p.url == PAGES[0].url)
        assert "[...]" not in nanite.text and "[…]" not in nanite.text and "![" not in nanite.text
        assert "Translucent materials are not supported by Nanite." in nanite.text
        assert "\n\n\n" not in nanite.text
        assert nanite.id == hashlib.md5(PAGES[0].url.encode()).hexdigest()


def test_off_domain_results_are_dropped_even_if_the_server_returns_them():
    with FakeTavilyServer(PAGES, ignore_domains=True) as server:
        result = search(server, "nanite translucent materials", include_domains=UE_DOMAINS)
        assert result.dropped_off_domain == 1
        assert all(domain_allowed(p.url, UE_DOMAINS) for p in result.pages)
        assert PAGES[2].url not in server.requests_to("/extract")[0].body["urls"]


def test_only_the_top_pages_are_extracted():
    with FakeTavilyServer(PAGES) as server:
        result = search(server, "nanite translucent materials", extract_top=1)
        assert len(result.pages) == 1
        assert len(server.requests_to("/extract")[0].body["urls"]) == 1


def test_failures_become_errors_not_exceptions():
    with FakeTavilyServer(PAGES) as server:
        server.queue_error(500, "/search")
        assert "web search failed" in search(server, "nanite").error
        bad = WebSearch(api_key="wrong", base_url=server.base_url)
        assert "web search failed" in asyncio.run(bad.search("nanite")).error
        nothing = search(server, "zzzz qqqq")  # no results: empty, and not an error
        assert nothing.pages == [] and not nothing.error


def test_extract_failure_falls_back_to_the_search_snippets():
    with FakeTavilyServer(PAGES) as server:
        server.queue_error(500, "/extract")
        result = search(server, "nanite translucent materials", include_domains=UE_DOMAINS)
        assert "extract failed" in result.error
        assert {p.text for p in result.pages} == {PAGES[0].content, PAGES[1].content}


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://dev.epicgames.com/documentation/x", True),
        ("https://sub.forums.unrealengine.com/t/1", True),
        ("https://notdev.epicgames.com.evil.io/x", False),
        ("https://evil-dev.epicgames.com", False),
    ],
)
def test_domain_check(url: str, allowed: bool):
    assert domain_allowed(url, ["dev.epicgames.com", "https://forums.unrealengine.com/"]) is allowed
    assert domain_allowed(url, []) is True


def test_cleanup_keeps_text_and_bounds_length():
    assert clean_web_text("a [...] b […] c") == "a\n\nb\n\nc"
    assert len(clean_web_text("word\n" * 2000)) <= 3002


def test_no_key_means_no_web_search_object(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("VAULT_RAG_TAVILY_API_KEY", raising=False)
    assert build_web_search(Settings(), include_domains=[]) is None
    keyed = build_web_search(Settings(tavily_api_key="k", tavily_base_url="http://x"), ["a.com"])
    assert keyed is not None and keyed.base_url == "http://x" and keyed.include_domains == ["a.com"]
    assert "no Tavily API key" in Resources.__dataclass_fields__["web_missing"].default


# -- web search inside the graph: when it runs, and when it never does -----------------------
QUESTION = "Nanite 支持半透明材质吗？"


@pytest.fixture(scope="module")
def index():
    return shared_index()


def web_run(server: FakeTavilyServer, llm_server: FakeOpenAIServer | None = None, **config: object):
    web = WebSearch(api_key=server.api_key, base_url=server.base_url, include_domains=UE_DOMAINS)
    llm = chat_provider(llm_server.base_url) if llm_server else None
    return collect(QUESTION, resources(llm, web, **config))


def test_weak_vault_evidence_triggers_web_search_in_hybrid_mode(index):
    with FakeTavilyServer(PAGES) as tavily, FakeOpenAIServer() as llm:
        model = ScriptedModel()
        llm.default_chat_reply = model
        run = web_run(tavily, llm, web_mode="hybrid", weak_evidence_threshold=1.01)
        assert "web_search" in run.nodes and len(run.progress("check_evidence")) == 2
        searched = [r.body["query"] for r in tavily.requests_to("/search")]
        assert searched == [f"{QUESTION} statement"]  # the plan's declarative web query
        grade_prompt = next(r for r in llm.chat_requests if "cite as: https://" in str(r.body))
        assert "[...]" not in str(grade_prompt.body)  # cleaned before the model sees it
        assert model.count("grade") == 1  # vault and web candidates graded in one call
        assert run.final["llm_calls"] == 4


def test_strong_vault_evidence_needs_no_web(index):
    with FakeTavilyServer(PAGES) as tavily:
        run = web_run(tavily, web_mode="hybrid", weak_evidence_threshold=0.0)
        assert "web_search" not in run.nodes and tavily.requests == []


def test_strict_mode_never_searches_the_web(index):
    with FakeTavilyServer(PAGES) as tavily:
        for when in ("weak", "always"):
            run = web_run(tavily, web_mode="strict", web_when=when, weak_evidence_threshold=1.01)
            assert "web_search" not in run.nodes
        assert tavily.requests == []


def test_always_searches_web_alongside_the_vault(index):
    with FakeTavilyServer(PAGES) as tavily:
        run = web_run(tavily, web_mode="hybrid", web_when="always", weak_evidence_threshold=0.0)
        assert len(run.progress("check_evidence")) == 1  # one fan-out, one fan-in
        assert {"retrieve_vault", "web_search"} <= set(run.nodes)
        assert len(tavily.requests_to("/search")) == 1
        web = [c for c in run.final["citations"] if c["kind"] == "web"]
        assert all(domain_allowed(c["url"], UE_DOMAINS) for c in web)


def test_no_model_off_vault_question_goes_to_the_web_with_calibrated_threshold(index):
    with FakeTavilyServer(
        [
            *PAGES,
            FakePage(
                "https://dev.epicgames.com/bread",
                "Sourdough",
                "how to bake sourdough bread at home",
                "Bake sourdough bread [...] at 230 C.",
            ),
        ]
    ) as tavily:
        web = WebSearch(
            api_key=tavily.api_key, base_url=tavily.base_url, include_domains=UE_DOMAINS
        )
        run = collect(
            "How do I bake sourdough bread at home?", resources(None, web, web_mode="hybrid")
        )
        assert "web_search" in run.nodes
        assert [r.body["query"] for r in tavily.requests_to("/search")] == [
            "How do I bake sourdough bread at home?"
        ]
        web_citations = [c for c in run.final["citations"] if c["kind"] == "web"]
        assert web_citations and web_citations[0]["url"] == "https://dev.epicgames.com/bread"
        assert "[...]" not in run.final["answer"]


def test_hybrid_without_a_key_notes_it_and_answers_from_the_vault(index):
    run = collect(QUESTION, resources(None, None, web_mode="hybrid"))
    assert not run.errors and "web_search" not in run.nodes
    assert any("no Tavily API key" in n for n in run.final["notes"])
    assert run.final["citations"]
