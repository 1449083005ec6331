"""Reusable test doubles (see openai_server.py for the OpenAI wire-protocol fake)."""
