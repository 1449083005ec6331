"""Source kinds: each kind of vault file (Markdown notes, PDFs, canvases) turned into retrieval
units with provenance. `registry.py` maps file suffixes to kinds; see docs/architecture.md,
"How to add a source kind"."""
