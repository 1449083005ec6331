"""The MCP server's limits (all settings, `mcp_*`) and the note resource URIs."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from vault_rag.settings import Settings

URI_PREFIX = "vault-rag://note/"  # + the vault-relative path, each segment percent-encoded
URI_TEMPLATE = URI_PREFIX + "{+path}"


@dataclass(frozen=True)
class Limits:
    max_k: int  # search_notes and related_notes
    max_passage_chars: int  # each search passage
    max_note_chars: int  # read_note and a note resource
    page_size: int  # list_notes and resources/list
    max_query_chars: int = 2000

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_k=settings.mcp_max_k,
            max_passage_chars=settings.mcp_max_passage_chars,
            max_note_chars=settings.mcp_max_note_chars,
            page_size=settings.mcp_page_size,
        )


def note_uri(path: str) -> str:
    return URI_PREFIX + quote(path, safe="/")


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" [… cut: {len(text) - limit} more characters]"
