"""Vault RAG: turn an Obsidian vault into a question-answering assistant that cites your notes."""

import os

# numpy's OpenBLAS starts a thread per core for every matrix-vector product; the sidecar's are
# small (the note centroids: 10,000 x 384) and share the CPU with the embedding model and
# Obsidian, where the threads' spin-waiting made one product ~40 ms instead of ~1.5 ms on a
# busy two-core machine (same results, bit for bit). Set before numpy loads; a user's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
