"""What the CLI and the server share at run time: opening the index from settings
(`serving/context.py`), the server's record and token (`serving/server_info.py`,
`serving/server_token.py`), a search through a running sidecar or in its own process
(`serving/search_client.py`, `serving/local_search.py`), and the bundled sample vault
(`serving/sample.py`)."""
