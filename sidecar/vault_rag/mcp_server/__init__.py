"""The vault as an MCP server for other agents (`vault-rag mcp` over stdio, `/mcp` on
`vault-rag serve`): `server.py` (tools and resources), `local.py` (answered here from
`services/`), `remote.py` (through a running sidecar), `stdio.py`, `http.py`."""
