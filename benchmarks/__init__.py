"""The benchmarks: scripts that print tables of medians and ratios against a baseline run in the
same process. One entry point, run from the repository root with the project's venv:

    python -m benchmarks              # list them
    python -m benchmarks NAME [ARGS]  # run one; NAME --help for its arguments

Each module `benchmarks/NAME.py` has a `main(argv) -> int`; what they share (paths, a sidecar
subprocess and its environment, timing) lives in `common.py`, `procs.py` and `stats.py`.
docs/benchmarks.md has the figures and the commands that made them.
"""

# NAME -> what it measures (the modules' first docstring lines say more).
BENCHMARKS = {
    "whole": "the whole sidecar: index, restart, edits, search, memory, vs the naive pipeline",
    "cold": "a cold `vault-rag search` / no-op `index` / server start, before vs after a revision",
    "search": "warm search in one process, p50/p95 and a profile",
    "routing": "what routing adds to a search over several collections (p50/p95, paired)",
    "retrieval": "hit@k and latency of dense, BM25 and fusion on the sample questions",
    "lexical": "the lexical index: tokenisers, build, load, edits, queries",
    "scan": "what a write and a start-up scan pay to know the vault's files",
    "writes": "the manifest's work per written note and per search",
    "stores": "search latency and write throughput per vector-store back-end",
    "plugin": "the plugin's start-up reconcile against a running sidecar",
    "ask_load": "asks under a flood of searches, per search capacity",
    "mcp_start": "start-up of `vault-rag mcp` over stdio",
    "pdf": "PDF text extraction: pypdfium2 vs pypdf, speed and CJK text",
    "code_parse": "a code source tree to units outside the model: files/s, symbols/s",
    "graph_build": "a code tree's relations (issue 43): build time, size, question latency",
    "embedding_switch": "an embedding model switch: the estimated vs the measured re-embedding",
    "remote": "search and ask over the sealed remote listener vs loopback, and pairing time",
    "web": "web sources: page extraction compared; crawl, first index and a 304 refresh",
}
