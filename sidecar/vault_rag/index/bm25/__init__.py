"""The lexical side of the index: CJK-aware tokenising (`tokenize.py`), BM25 postings kept up to
date row by row (`postings.py`), the SQLite-backed index with its snapshot (`lexical.py`,
`lexical_snapshot.py`), and the reference scorer the tests and benchmarks compare with
(`reference.py`)."""
