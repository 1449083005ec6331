"""What the vault answers, whoever asks: the HTTP routes (`api/routers/`) and the MCP tools
(`mcp_server/`) both call these functions and only translate their results and errors
(`services.errors.ServiceError`) into their own wire shapes. Nothing here knows about HTTP or MCP.

Every function takes a `VaultParts` (the server's `ServerState` is one; `mcp_server/local.py`
builds another for `vault-rag mcp` without a sidecar): the settings, the open index, the
excluded folders and the feedback prior.
"""
