"""`vault-rag mcp` over stdio, driven by the MCP SDK's own client as a real subprocess session,
on a real index of the sample vault with no sidecar running (the index in the server's own
process). One session speaks the 2026-07-28 protocol (`server/discover`, no handshake), the
other the handshake era (`initialize`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_helpers import (
    SETTINGS_ENV,
    build_vault,
    check_bad_input,
    check_every_tool,
    check_exclusions,
    check_listing,
    check_resources,
    readme_servers,
)

VAULT_RAG = Path(sys.executable).with_name("vault-rag")  # the installed entry point


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, StdioServerParameters]:
    vault, data = build_vault(tmp_path_factory.mktemp("mcp-stdio"))
    env = {**os.environ, **SETTINGS_ENV}
    env.pop("VAULT_RAG_VAULT", None)
    args = ["mcp", "--vault", str(vault), "--data-dir", str(data)]
    return vault, StdioServerParameters(command=str(VAULT_RAG), args=args, env=env)


def test_modern_session_lists_and_calls_every_tool(served) -> None:
    vault, params = served

    async def session() -> None:
        async with Client(params, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"  # discovered, no handshake
            assert client.server_info is not None and client.server_info.name == "vault-rag"
            await check_listing(client)
            await check_every_tool(client, vault, served_by="in-process")
            await check_resources(client, vault)

    anyio.run(session)


def test_handshake_session_refuses_bad_input_and_never_serves_excluded_notes(served) -> None:
    _vault, params = served

    async def session() -> None:
        async with Client(params, mode="legacy") as client:  # `initialize` first
            assert client.protocol_version.startswith("2025-")
            assert client.server_info is not None and client.server_info.name == "vault-rag"
            await check_listing(client)
            await check_bad_input(client)
            await check_exclusions(client)

    anyio.run(session)


def test_the_readme_stdio_configs_start_the_server(served) -> None:
    """Claude Desktop / Cursor / VS Code JSON from the README, as those clients run it."""
    vault, params = served
    stdio = [s for s in readme_servers() if "command" in s]
    assert len(stdio) == 2 and all(s.get("type", "stdio") == "stdio" for s in stdio)

    async def session(entry: dict) -> None:
        assert entry["command"] == "vault-rag"
        args = [str(vault) if a == "/path/to/your/vault" else a for a in entry["args"]]
        data = params.args[params.args.index("--data-dir") + 1]
        env = {**params.env, "VAULT_RAG_DATA_DIR": data}  # type: ignore[dict-item]
        config = StdioServerParameters(command=str(VAULT_RAG), args=args, env=env)
        async with Client(config) as client:
            found = await client.call_tool("search_notes", {"query": "Enable Nanite Support"})
            assert found.structured_content is not None
            assert found.structured_content["results"][0]["note"] == "Rendering/Lumen 与 Nanite.md"

    for entry in stdio:
        anyio.run(session, entry)
