"""Vector-store backends beyond embedded Chroma: Chroma in client/server mode and Milvus.

Each implements the `VectorStore` protocol of `index/vector_store.py`; `naming.py` names their
collections per vault and per embedding model so one server can hold many indexes.
"""
