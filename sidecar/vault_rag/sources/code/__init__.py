"""Code sources: a source tree parsed by tree-sitter into one unit per function, method, class
or struct (`symbols.py`), read and guarded by `kind.py`; grammars per language in
`languages.py` (PyPI wheels with the compiled grammar inside: nothing is fetched at run time)."""
