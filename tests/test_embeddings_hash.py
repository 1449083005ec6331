"""The benchmark's stand-in embedder: reachable through the factory and the settings, same
shapes as the bundled model, deterministic, and never the default."""

from __future__ import annotations

import math

from vault_rag.embeddings.factory import PROVIDER_KINDS, make_provider
from vault_rag.serving.context import build_provider
from vault_rag.settings import Settings


def test_hash_provider_is_deterministic_normalised_and_384_wide():
    provider = make_provider("hash")
    assert provider.dimension == 384 and provider.max_tokens == 512
    assert provider.model_id.startswith("hash:")
    texts = ["蓝图调用 C++ 函数", "spawn an actor", ""]
    first = provider.embed_documents(texts)
    assert first == make_provider("hash").embed_documents(texts)
    assert provider.embed_query(texts[0]) == first[0]
    for vector in first:
        assert len(vector) == 384
        assert math.isclose(sum(x * x for x in vector), 1.0, rel_tol=1e-9)
    assert first[0] != first[1]
    assert provider.count_tokens("spawn an actor") > 2


def test_settings_select_it_only_when_asked():
    assert "hash" in PROVIDER_KINDS
    assert Settings().embeddings == "local"
    provider = build_provider(Settings(embeddings="hash", embeddings_batch_size=8))
    assert provider.model_id.startswith("hash:") and provider.batch_size == 8
