"""Markdown (embeds already resolved) → chunks with the metadata retrieval needs."""
