"""The dense side beside the vector stores: each note's centroid and the corpus mean kept in step
with the manifest (`note_vectors.py`), and the read-only snapshot of every unit vector a process
that only searches maps instead of opening the store (`snapshot.py`)."""
