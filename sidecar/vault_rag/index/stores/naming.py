"""Collection names: one per vault, index and embedding model, valid on every backend.

`vr_<vault-slug>_<12 hex of sha256(vault path, data dir, model id)>`: lower-case ASCII
letters, digits and underscores, starting with a letter and ending with a digit or letter, at
most 48 characters. That satisfies Milvus (letters, digits, `_`, first a letter or `_`, ≤ 255)
and Chroma (3–512 of `[a-zA-Z0-9._-]`, alphanumeric at both ends) alike, so two vaults or two
models never share a collection on one server. The data dir is in the hash too: two indexes
of one vault (another `--data-dir`, a copy being migrated) never write into each other's
collection.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

SLUG_MAX = 30


def collection_name(vault_root: Path, model_id: str, data_dir: Path) -> str:
    absolute = str(vault_root.expanduser().resolve())
    index = str(data_dir.expanduser().resolve())
    slug = re.sub(r"[^a-z0-9]+", "_", Path(absolute).name.lower()).strip("_")[:SLUG_MAX]
    digest = hashlib.sha256(f"{absolute}\n{index}\n{model_id}".encode()).hexdigest()[:12]
    return f"vr_{slug.strip('_') or 'vault'}_{digest}"
