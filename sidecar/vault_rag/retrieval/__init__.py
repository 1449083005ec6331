"""Hybrid retrieval: dense + BM25, fused, capped per note, de-duplicated across embeds."""
