"""Online documentation as a source (`kind = "web"`): a polite crawler (`crawl.py`, `fetch.py`)
writes each page's main content as Markdown (`extract.py`) into the source's mirror folder, with
its URL, title and heading anchors in the crawl state (`state.py`); the indexer then reads the
mirror like a folder of Markdown and PDFs (`kind.py`), so every unit carries its page's URL."""
