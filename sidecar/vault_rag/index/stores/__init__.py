"""Vector-store backends behind one protocol (`protocol.py`), chosen by the `vector_store`
setting (`factory.py`): embedded Chroma (`chroma.py`), Chroma in client/server mode
(`chroma_http.py`) and Milvus (`milvus.py`). `naming.py` names their collections per vault and
per embedding model so one server can hold many indexes.
"""
