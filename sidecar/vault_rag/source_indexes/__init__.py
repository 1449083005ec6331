"""Sources beside the vault (a code tree, another vault, a folder of docs), each its own
collection: declared and checked (`specs.py`), indexed into a data dir of its own
(`collections.py`) and served by a running sidecar (`service.py`). Above the index and
retrieval, which it uses; the file kinds a source holds are `sources/`."""
