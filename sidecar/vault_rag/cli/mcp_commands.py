"""`vault-rag mcp`: the vault's MCP server over stdio (`mcp_server/stdio.py`). The entry point
(`entry.py`) runs it before the Typer CLI is imported, so an agent's client gets its first
answer fast; this command is what `--help` and any unusual option go through."""

from __future__ import annotations

from vault_rag.cli.app import DataDirOption, VaultOption, app


@app.command()
def mcp(vault: VaultOption, data_dir: DataDirOption = None) -> None:
    """Serve the vault to other agents over MCP on stdin/stdout (Claude Desktop, Cursor, VS
    Code, LangGraph...): search, ask, read notes, related notes. Uses the sidecar running on
    the vault when there is one, else the index in this process. Read-only."""
    from vault_rag.mcp_server.stdio import run_stdio

    run_stdio(vault, data_dir)
