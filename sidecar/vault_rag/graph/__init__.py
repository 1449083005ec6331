"""Answering questions: the LangGraph workflow (`graph.py`), its nodes, providers and the
streaming entry point for the CLI and the HTTP server (`run.py`)."""
