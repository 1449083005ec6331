"""Retrieval evaluation (`vault-rag eval`): question files, metrics, the naive baseline."""
