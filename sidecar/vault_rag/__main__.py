"""`python -m vault_rag` runs the CLI."""

from vault_rag.cli import app

app()
