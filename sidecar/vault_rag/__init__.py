"""Vault RAG: turn an Obsidian vault into a question-answering assistant that cites your notes."""

__version__ = "0.1.0"
