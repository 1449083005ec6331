"""The code and note graph beside the vectors (issue 43): a code source's relations in SQLite
next to its manifest (`store.py`, `sync.py`, `code.py`), the notes' links read from the index
(`notes.py`), and the links between them (`mentions.py`)."""
