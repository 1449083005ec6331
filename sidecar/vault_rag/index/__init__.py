"""The index: manifest, vector cache, vector store and lexical index, kept consistent.

At this level the manifest and what reads it (`manifest.py`, `note_file.py`, `note_names.py`,
`lock.py`, `status.py`), the one object a process holds (`vault_index.py`), and the dense
snapshot's building (`snapshot_build.py`) and a store migration (`migrate.py`). Below it:
`bm25/` (the lexical side), `dense/` (note centroids and the dense snapshot), `stores/` (the
vector stores), `updates/` (how changes get in)."""
