"""The extractive answer quotes a code unit whole (the function, from its doc comment to its
closing brace), never the few lines that share words with the question: a real code source
indexed and searched (hash embedder, real BM25 and Chroma), its hits turned into the answer
graph's documents as the graph does."""

from __future__ import annotations

import subprocess
from pathlib import Path

from vault_rag.graph.extractive import MAX_EXCERPT_CHARS, extractive_answer
from vault_rag.graph.sources import doc_from_result
from vault_rag.retrieval.collections import search_collections
from vault_rag.retrieval.hybrid import search_options
from vault_rag.serving.context import open_index
from vault_rag.settings import Settings, SourceSpec
from vault_rag.source_indexes.collections import index_sources, open_source
from vault_rag.source_indexes.specs import save_added

FUNCTION = """\
/** Moves every pending order to the shipped list, charging each customer once. */
void UOrderBook::ShipPendingOrders(float DeltaSeconds)
{
    TArray<FOrder> Shipped;
    for (FOrder& Order : PendingOrders)
    {
        if (!Order.bPaid)
        {
            Order.Customer->Charge(Order.Total);
            Order.bPaid = true;
        }
        Order.ShippedAt = FDateTime::UtcNow();
        Shipped.Add(Order);
    }
    PendingOrders.Reset();
    ShippedOrders.Append(Shipped);
    OnOrdersShipped.Broadcast(Shipped.Num());
}"""
SOURCE = (
    f'#include "OrderBook.h"\n\n{FUNCTION}\n\nint32 UOrderBook::Count() const {{ return 0; }}\n'
)


def test_a_function_is_quoted_whole(tmp_path: Path, monkeypatch) -> None:
    assert len(FUNCTION) > MAX_EXCERPT_CHARS  # a Markdown excerpt would be cut to a fragment
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nNothing about orders.\n", encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "Source").mkdir(parents=True)
    (repo / "Source" / "OrderBook.cpp").write_text(SOURCE, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    data = tmp_path / "data"
    spec = SourceSpec(name="shop", path=repo, kind="code")
    save_added(data, [spec])
    settings = Settings(vault=vault, data_dir=data, embeddings="hash", llm_model=None)
    vault_index = open_index(settings)
    try:
        assert [r.error for r in index_sources(settings, vault_index.provider)] == [None]
        source = open_source(settings, spec, repo.resolve(), vault_index.provider)
        try:
            hits = search_collections(
                {"shop": source}, "which orders get charged when shipped", search_options(settings)
            )
        finally:
            source.close()
    finally:
        vault_index.close()
    top = hits[0]
    assert top.symbol == "UOrderBook::ShipPendingOrders" and top.kind == "code"
    doc = doc_from_result(top, 0)
    answer, used = extractive_answer("which orders get charged when shipped", [doc])
    assert used == [top.chunk_id]
    assert f"```cpp\n{FUNCTION}\n```" in answer  # every line, verbatim, in a code block
    assert answer.endswith("— Source/OrderBook.cpp:3-20 (UOrderBook::ShipPendingOrders)")


def test_a_fence_inside_the_code_does_not_end_the_quote() -> None:
    from vault_rag.graph.state import Doc

    text = 'def show():\n    """Prints ```markdown``` fences."""\n    print("```")'
    doc = Doc(id="u1", text=text, cite="tools.py:1-3 (show)", note_path="tools.py")
    doc["source_kind"] = "code"
    answer, _ = extractive_answer("show fences", [doc])
    assert answer.startswith(f"````python\n{text}\n````")
