"""How changes reach the index: one way in for posted notes, deletes, renames, disk batches and
the start-up scan (`sync.py`, with the checks a posted batch must pass in `post_checks.py` and
how a posted note and its file on disk agree in `posted_record.py`), the planner that chunks,
embeds and stores (`indexer.py`, the units' vectors in `unit_vectors.py`, their sections' in
`sections.py`), and the single writer thread that runs it all in priority order (`writer.py`)."""
