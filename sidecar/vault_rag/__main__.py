"""`python -m vault_rag` runs the CLI (the same entry point as `vault-rag`)."""

from vault_rag.entry import main

main()
