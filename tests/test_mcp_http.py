"""`/mcp` on `vault-rag serve`: a real uvicorn server, driven by the MCP SDK's streamable-HTTP
client, on a real index of the sample vault; the token, Host and Origin checks with plain
HTTP; and `vault-rag mcp` over stdio forwarding to this running sidecar, then carrying on with
its own index once the sidecar stops."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_helpers import (
    SETTINGS,
    SETTINGS_ENV,
    build_vault,
    call,
    check_bad_input,
    check_every_tool,
    check_exclusions,
    check_listing,
    check_resources,
    readme_servers,
)
from test_server_helpers import LiveServer
from vault_rag import __version__
from vault_rag.api import create_app
from vault_rag.serving.server_info import ServerRecord, write_server_record
from vault_rag.serving.server_token import load_or_create_token
from vault_rag.settings import Settings

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path, Path]]:
    vault, data = build_vault(tmp_path_factory.mktemp("mcp-http"))
    token = load_or_create_token(data)[0]  # the data dir's token, as `vault-rag serve` uses
    app = create_app(Settings(vault=vault, data_dir=data, **SETTINGS), token=token)
    with LiveServer(app, token=token) as live:
        yield live, vault, data


def _client(live: LiveServer, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token or live.token}"}
    http = httpx2.AsyncClient(headers=headers, trust_env=False, timeout=120)
    return Client(streamable_http_client(f"{live.url}/mcp", http_client=http))


def test_streamable_http_lists_and_calls_every_tool(sidecar) -> None:
    live, vault, _ = sidecar

    async def session() -> None:
        async with _client(live) as client:
            assert client.protocol_version == "2026-07-28"
            await check_listing(client)
            await check_every_tool(client, vault, served_by="sidecar")
            await check_resources(client, vault)

    anyio.run(session)


def test_streamable_http_refuses_bad_input_and_never_serves_excluded_notes(sidecar) -> None:
    live, _, _ = sidecar

    async def session() -> None:
        http = httpx2.AsyncClient(headers=live.auth, trust_env=False, timeout=120)
        transport = streamable_http_client(f"{live.url}/mcp", http_client=http)
        async with Client(transport, mode="legacy") as client:  # `initialize` first
            assert client.server_info is not None and client.server_info.name == "vault-rag"
            await check_bad_input(client)
            await check_exclusions(client)

    anyio.run(session)


def test_the_readme_http_config_reaches_the_tools(sidecar) -> None:
    live, _, _ = sidecar
    (entry,) = [s for s in readme_servers() if s.get("type") == "http"]
    assert entry["url"] == "http://127.0.0.1:8765/mcp"  # the default port
    url = entry["url"].replace(":8765", f":{live.port}")
    headers = {k: v.replace("YOUR-SIDECAR-TOKEN", live.token) for k, v in entry["headers"].items()}

    async def session() -> None:
        http = httpx2.AsyncClient(headers=headers, trust_env=False, timeout=120)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            found = await call(client, "search_notes", query="Enable Nanite Support")
            assert found["results"][0]["note"] == "Rendering/Lumen 与 Nanite.md"

    anyio.run(session)


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", "Basic dXNlcjpwYXNz", ""])
def test_no_or_wrong_token_is_401_and_nothing_else(sidecar, authorization) -> None:
    live, vault, data = sidecar
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    response = httpx.post(f"{live.url}/mcp", headers=headers, json=LIST_TOOLS, trust_env=False)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json() == {
        "code": "unauthorized",
        "message": "missing or wrong bearer token (see `vault-rag token --vault PATH`)",
        "detail": None,
    }
    for leak in (str(vault), str(data), "Traceback", "search_notes", live.token):
        assert leak not in response.text


def test_the_sdk_client_without_the_token_cannot_connect(sidecar) -> None:
    live, _, _ = sidecar

    async def session() -> None:
        async with _client(live, token="not-the-token") as client:
            await client.list_tools()

    # The SDK reports the 401 as an MCP error (the status itself: the plain HTTP test above)
    with pytest.raises(BaseExceptionGroup) as caught:
        anyio.run(session)
    matched, _ = caught.value.split(MCPError)
    assert matched is not None, caught.value


def test_a_foreign_origin_is_refused_and_an_allowed_one_served(sidecar) -> None:
    live, _, _ = sidecar
    headers = {**MCP_HEADERS, **live.auth}
    for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example"):
        response = httpx.post(
            f"{live.url}/mcp", headers={**headers, "Origin": origin}, json=LIST_TOOLS
        )
        assert response.status_code == 403, origin
        assert response.json()["code"] == "origin_not_allowed"
    allowed = httpx.post(
        f"{live.url}/mcp", headers={**headers, "Origin": "app://obsidian.md"}, json=LIST_TOOLS
    )
    assert allowed.status_code == 200, allowed.text
    names = {t["name"] for t in allowed.json()["result"]["tools"]}
    assert "search_notes" in names
    assert allowed.headers["access-control-allow-origin"] == "app://obsidian.md"


def test_a_foreign_host_is_refused(sidecar) -> None:
    live, _, _ = sidecar
    headers = {**MCP_HEADERS, **live.auth, "Host": f"attacker.example:{live.port}"}
    response = httpx.post(f"{live.url}/mcp", headers=headers, json=LIST_TOOLS)
    assert response.status_code == 400 and response.json()["code"] == "invalid_host"


def test_the_server_binds_loopback_only(sidecar) -> None:
    from vault_rag.api import HOST

    live, _, _ = sidecar
    assert HOST == "127.0.0.1" and live.url.startswith("http://127.0.0.1:")
    host, port = live.sock.getsockname()
    assert host == "127.0.0.1" and port == live.port


def test_stdio_goes_through_the_running_sidecar_then_on_alone(sidecar) -> None:
    """`vault-rag mcp` finds the sidecar by its record (as `vault-rag search` does) and
    forwards to its `/mcp`; when the sidecar stops, the same session goes on in process."""
    live, vault, data = sidecar
    write_server_record(data, ServerRecord(live.url, os.getpid(), str(vault), __version__))
    env = {**os.environ, **SETTINGS_ENV}
    args = ["mcp", "--vault", str(vault), "--data-dir", str(data)]
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("vault-rag")), args=args, env=env
    )

    async def session() -> None:
        async with Client(params) as client:
            status = await call(client, "vault_status")
            assert status["served_by"] == "sidecar"
            found = await call(client, "search_notes", query="Enable Nanite Support", k=3)
            assert found["results"][0]["note"] == "Rendering/Lumen 与 Nanite.md"
            error = await client.call_tool("read_note", {"path": "Private/Secret.md"})
            assert error.is_error and "excluded" in error.content[0].text
            page = await client.list_resources()
            assert len(page.resources) == 10 and page.next_cursor
            await anyio.to_thread.run_sync(live.__exit__, None, None, None)  # sidecar stops
            status = await call(client, "vault_status")
            assert status["served_by"] == "in-process"
            found = await call(client, "search_notes", query="Enable Nanite Support", k=3)
            assert found["results"][0]["note"] == "Rendering/Lumen 与 Nanite.md"

    anyio.run(session)
