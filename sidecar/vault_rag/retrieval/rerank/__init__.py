"""The re-ranking stage: a second look at the fused top candidates (`base.Reranker`), chosen by
the `rerank` setting in `factory.make_reranker`."""
