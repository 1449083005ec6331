"""Shared pieces of the MCP tests (no tests here): the vault they serve and what the tools
must answer about it, the same over stdio and over HTTP.

The vault is the sample vault plus an excluded folder `Private/` holding a secret, and
`Leaky.md`, which embeds that secret: no tool or resource may ever show the secret. Indexed
for real (Chroma, BM25, manifest) with the hash embedder, so no model loads in the server
subprocess."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from mcp import Client

from vault_rag.serving.context import make_indexer, open_index
from vault_rag.serving.sample import sample_vault_path
from vault_rag.settings import Settings

SECRET = "zanzibar-4242"
SETTINGS_ENV = {
    "VAULT_RAG_EMBEDDINGS": "hash",
    "VAULT_RAG_EXCLUDE": '["Private"]',
    "VAULT_RAG_MCP_PAGE_SIZE": "10",
    "VAULT_RAG_MCP_MAX_K": "20",
    "VAULT_RAG_MCP_MAX_NOTE_CHARS": "1000",
    "VAULT_RAG_MCP_MAX_PASSAGE_CHARS": "400",
    "VAULT_RAG_LLM_MODEL": "",
}
SETTINGS = {
    "embeddings": "hash",
    "exclude": ["Private"],
    "mcp_page_size": 10,
    "mcp_max_k": 20,
    "mcp_max_note_chars": 1000,
    "mcp_max_passage_chars": 400,
    "llm_model": None,
    "tavily_api_key": None,
    "server_watch": False,
}
NANITE = "Rendering/Lumen 与 Nanite.md"
TOOLS = {
    "search_notes",
    "ask_vault",
    "read_note",
    "related_notes",
    "list_notes",
    "vault_status",
    "find_symbol",
    "symbol_relations",
    "note_links",
}


def build_vault(root: Path) -> tuple[Path, Path]:
    """(vault, data dir): the test vault, indexed."""
    vault = root / "vault"
    shutil.copytree(sample_vault_path(), vault)
    (vault / "Private").mkdir()
    (vault / "Private" / "Secret.md").write_text(
        f"# Secret\n\nThe launch code is {SECRET}.\n", encoding="utf-8"
    )
    (vault / "Leaky.md").write_text(
        "# Leaky\n\nThis note embeds a private one:\n\n![[Private/Secret]]\n\nEnd.\n",
        encoding="utf-8",
    )
    data = root / "data"
    settings = Settings(vault=vault, data_dir=data, **SETTINGS)
    index = open_index(settings)
    try:
        make_indexer(settings, index).run()
        indexed = set(index.manifest.notes())
    finally:
        index.close()
    assert "Leaky.md" in indexed and not any(p.startswith("Private/") for p in indexed)
    return vault, data


def indexed_notes(vault: Path) -> set[str]:
    notes = {
        p.relative_to(vault).as_posix()
        for suffix in ("*.md", "*.pdf", "*.canvas")  # the sample vault has a PDF and a canvas
        for p in vault.rglob(suffix)
    }
    return {n for n in notes if not n.startswith("Private/")}


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured answer; fails the test on a tool error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.content and result.content[0].type == "text" and result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


async def error(client: Client, tool: str, **arguments: Any) -> str:
    """A tool error's text; fails the test when the call succeeds."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should have failed: {result.content}"
    return result.content[0].text


async def check_listing(client: Client) -> None:
    """initialize/discover happened (the client is open); tools and resources are listed."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.description and tool.input_schema["type"] == "object", name
        assert tool.output_schema is not None, name
        read_only = tool.annotations and tool.annotations.read_only_hint
        assert read_only is (name != "ask_vault"), name
    assert tools["search_notes"].input_schema["properties"]["k"]["maximum"] == 20
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["vault-rag://note/{+path}"]


async def check_resources(client: Client, vault: Path) -> None:
    """Every indexed note, a page of 10 at a time, none excluded; a note reads resolved."""
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await client.list_resources(cursor=cursor)
        assert len(page.resources) <= 10
        seen += [r.name for r in page.resources]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3 and len(seen) == len(set(seen))
    assert set(seen) == indexed_notes(vault)
    uri = "vault-rag://note/%E8%B8%A9%E5%9D%91%E8%AE%B0%E5%BD%95%20Pitfalls.md"
    text = (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]
    assert "花了一个下午" in text  # the note's own text, and its embed resolved:
    assert "没有 UPROPERTY 的 UObject 指针成员不会阻止 GC 回收" in text
    assert "\n![[UObject 与 GC#^gc-pitfall]]\n" not in text


async def check_every_tool(client: Client, vault: Path, served_by: str) -> None:
    """A call of every tool, with the right note for a known question."""
    found = await call(client, "search_notes", query="Enable Nanite Support", k=5)
    top = found["results"][0]
    assert top["note"] == NANITE and top["link"].startswith("[[Rendering/Lumen 与 Nanite#")
    assert "Enable Nanite Support" in top["text"] and top["line_start"] <= top["line_end"]
    assert len(found["results"]) <= 5

    note = await call(
        client, "read_note", path=NANITE, start_line=top["line_start"], end_line=top["line_end"]
    )
    assert "Enable Nanite Support" in note["text"] and note["indexed"] is True
    assert note["uri"] == "vault-rag://note/Rendering/Lumen%20%E4%B8%8E%20Nanite.md"

    pitfalls = await call(client, "read_note", path="踩坑记录 Pitfalls.md")
    embedded = {e["note"] for e in pitfalls["embeds"]}
    assert "C++/UObject 与 GC.md" in embedded
    gc = next(e for e in pitfalls["embeds"] if e["note"] == "C++/UObject 与 GC.md")
    assert gc["host_line"] == 15 and gc["chars"] > 0
    raw = await call(client, "read_note", path="踩坑记录 Pitfalls.md", resolve_embeds=False)
    assert "![[UObject 与 GC#^gc-pitfall]]" in raw["text"] and raw["embeds"] == []

    # Big results are cut with a marker, at the limits the settings give
    gc_note = "C++/UObject 与 GC.md"  # 4,588 characters
    head = await call(client, "read_note", path=gc_note)
    assert head["truncated"] and "[… cut at 1000 characters:" in head["text"]
    assert len(head["text"]) < 1100 and head["next_start_line"] > 1
    rest = await call(client, "read_note", path=gc_note, start_line=head["next_start_line"])
    assert rest["start_line"] == head["next_start_line"] and rest["text"] != head["text"]
    wide = await call(client, "search_notes", query="UObject GC UPROPERTY", k=10)
    assert all(len(r["text"]) <= 400 + 40 for r in wide["results"])
    assert any("[… cut:" in r["text"] for r in wide["results"])

    related = await call(client, "related_notes", path=NANITE, k=3)
    assert related["status"] == "ok" and 1 <= len(related["related"]) <= 3
    assert NANITE not in {r["note"] for r in related["related"]}

    listed = await call(client, "list_notes", folder="Rendering")
    assert {n["path"] for n in listed["notes"]} == {
        p for p in indexed_notes(vault) if p.startswith("Rendering/")
    }
    since = await call(client, "list_notes", modified_since="2999-01-01")
    assert since["notes"] == []

    answer = await call(client, "ask_vault", question="How do I enable Nanite support?")
    assert answer["extractive"] is True and answer["citations"]
    assert NANITE in {c["note"] for c in answer["citations"]}

    links = await call(client, "note_links", path="踩坑记录 Pitfalls.md")
    assert ("C++/UObject 与 GC.md", "embed") in {(o["note"], o["kind"]) for o in links["out"]}
    back = await call(client, "note_links", path="C++/UObject 与 GC.md")
    assert "踩坑记录 Pitfalls.md" in {b["note"] for b in back["back"]}
    assert back["cite"] == "[[C++/UObject 与 GC]]"
    # no code source beside this vault: no definitions (and no error)
    assert (await call(client, "find_symbol", name="UObject::BeginDestroy"))["definitions"] == []

    status = await call(client, "vault_status")
    assert status["notes"] == len(indexed_notes(vault)) and status["excluded_folders"] == 1
    assert status["served_by"] == served_by


async def check_bad_input(client: Client) -> None:
    """Each bad input is a tool error with a clear message."""
    assert "not_found" in await error(client, "read_note", path="No Such Note.md")
    assert "unsafe_path" in await error(client, "read_note", path="../outside.md")
    assert "unsafe_path" in await error(client, "related_notes", path="/etc/passwd")
    assert "query is empty" in await error(client, "search_notes", query="   ")
    assert "query is empty" in await error(client, "ask_vault", question="")
    assert "at most 20" in await error(client, "search_notes", query="Nanite", k=21)
    assert "at most 20" in await error(client, "related_notes", path=NANITE, k=500)
    assert "before start_line" in await error(
        client, "read_note", path=NANITE, start_line=5, end_line=2
    )
    assert "ISO 8601" in await error(client, "list_notes", modified_since="last tuesday")
    assert "cursor" in await error(client, "list_notes", cursor="!!not-a-cursor")
    assert "no_code" in await error(client, "symbol_relations", relation="callers", symbol="f")
    assert "not_found" in await error(client, "note_links", path="No Such Note.md")


async def check_exclusions(client: Client) -> None:
    """The excluded folder is never served: not by path, search, embed, listing or resource."""
    for path in ("Private/Secret.md", "Private/Nothing Here.md"):  # the same answer either way
        assert "excluded" in await error(client, "read_note", path=path)
        assert "excluded" in await error(client, "related_notes", path=path)
    assert "excluded" in await error(client, "list_notes", folder="Private")
    found = await call(client, "search_notes", query=f"launch code {SECRET}", k=20)
    assert all(not r["note"].startswith("Private/") for r in found["results"])
    assert SECRET not in str(found["results"])
    leaky = await call(client, "read_note", path="Leaky.md")
    assert SECRET not in leaky["text"] and leaky["embeds"] == []
    assert "Private/Secret.md" not in leaky["dependencies"]
    answer = await call(client, "ask_vault", question="What is the launch code of the secret?")
    assert SECRET not in str(answer)
    assert all(not (c["note"] or "").startswith("Private/") for c in answer["citations"])
    listed = await call(client, "list_notes")
    assert all(not n["path"].startswith("Private/") for n in listed["notes"])
    assert "excluded" in await error(client, "note_links", path="Private/Secret.md")
    assert "excluded" in await error(client, "note_links", path=NANITE, other="Private/Secret.md")
    leaky_links = await call(client, "note_links", path="Leaky.md")
    assert "Private/" not in str(leaky_links)


def readme_servers() -> list[dict[str, Any]]:
    """The server entries of the MCP configs docs/mcp.md shows (linked from the README), as a
    client would read them."""
    import json
    import re

    page = (Path(__file__).resolve().parents[1] / "docs" / "mcp.md").read_text(encoding="utf-8")
    servers = []
    for block in re.findall(r"```json\n(.*?)```", page, re.DOTALL):
        config = json.loads(block)
        servers += list((config.get("mcpServers") or config.get("servers") or {}).values())
    return servers
