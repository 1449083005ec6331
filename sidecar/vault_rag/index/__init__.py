"""The index: manifest, vector cache, vector store and lexical index, kept consistent."""
