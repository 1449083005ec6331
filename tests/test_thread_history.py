"""`graph/history.list_threads` over a real checkpointer (AsyncSqliteSaver on a temp file): the
order, the pages and the threads it must leave out, with threads written straight into the
store (no server, no model). A thread whose only turn failed has checkpoints but no message:
it is written here as an empty checkpoint."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from vault_rag.graph.graph import build_graph
from vault_rag.graph.history import list_threads
from vault_rag.graph.run import open_checkpointer


async def _write(data_dir: Path, plan: list[str]) -> None:
    """One thread per item, oldest first: "t…" with a question and an answer, "x…" none."""
    async with open_checkpointer(data_dir) as saver:
        graph = build_graph(saver)
        for thread_id in plan:
            if thread_id.startswith("t"):
                messages = [HumanMessage(f"question {thread_id}"), AIMessage(f"answer {thread_id}")]
                config = {"configurable": {"thread_id": thread_id}}
                await graph.aupdate_state(config, {"messages": messages}, as_node="finish")
            else:
                config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
                await saver.aput(config, empty_checkpoint(), {"source": "input", "step": -1}, {})


async def _pages(data_dir: Path, limit: int) -> list[list[str]]:
    async with open_checkpointer(data_dir) as saver:
        graph = build_graph(saver)
        pages, before = [], None
        while True:
            page = await list_threads(saver, graph, limit=limit, before=before)
            assert len(page.threads) <= limit
            pages.append([t.thread_id for t in page.threads])
            if page.next_before is None:
                return pages
            assert page.threads, "a page that points further is never empty but the last"
            before = page.next_before


def test_pages_are_newest_first_and_skip_threads_without_messages(tmp_path):
    plan = ["t0", "x0", "t1", "x1", "x2", "t2", "t3", "x3", "t4", "t5", "x4", "x5", "x6", "t6"]
    asyncio.run(_write(tmp_path, plan))
    with_messages = [t for t in reversed(plan) if t.startswith("t")]
    for limit in (1, 2, 3, 7, 50):
        pages = asyncio.run(_pages(tmp_path, limit))
        listed = [t for page in pages for t in page]
        assert listed == with_messages, limit
        assert all(len(page) == limit for page in pages[:-1] if page), limit


def test_each_item_has_its_first_question_and_message_count(tmp_path):
    asyncio.run(_write(tmp_path, ["t0", "x0"]))

    async def read():
        async with open_checkpointer(tmp_path) as saver:
            return await list_threads(saver, build_graph(saver), limit=10)

    page = asyncio.run(read())
    assert [(t.thread_id, t.title, t.message_count) for t in page.threads] == [
        ("t0", "question t0", 2)
    ]
    assert page.next_before is None and page.threads[0].updated_at.tzinfo is not None


def test_no_store_yet_is_an_empty_page(tmp_path):
    assert asyncio.run(_pages(tmp_path, 5)) == [[]]
