"""Saved states of the lexical index: one directory per (database instance, generation).

A state is the postings of `bm25_postings.py`, compacted (no delta, no dead slots), as numpy
arrays plus the chunk ids, note paths and tags in JSON (flat lists). Writes go to a temp
directory renamed into place, so a reader sees a whole snapshot or none; anything unreadable is
ignored (a cache: the database can always be read again).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from contextlib import suppress
from pathlib import Path

import numpy as np

from vault_rag.index.bm25.postings import Postings, Row

log = logging.getLogger(__name__)

# Part of the directory name: bump when the saved layout changes.
SNAPSHOT_FORMAT = "3"
_STALE_TMP_S = 3600.0  # an unfinished snapshot dir older than this is a crashed writer's
_ARRAYS = ("indptr", "slots", "tfs", "lengths")


class Snapshots:
    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def name(instance: str, generation: int) -> str:
        return f"{instance}-{generation}-{SNAPSHOT_FORMAT}"

    def generations(self, instance: str) -> list[int]:
        """The generations saved for this database instance."""
        found: list[int] = []
        with suppress(OSError):
            for path in self.root.iterdir():
                parts = path.name.split("-")
                if len(parts) == 3 and parts[0] == instance and parts[2] == SNAPSHOT_FORMAT:
                    with suppress(ValueError):
                        found.append(int(parts[1]))
        return found

    def load(self, instance: str, generation: int) -> Postings | None:
        path = self.root / self.name(instance, generation)
        try:
            arrays = {name: np.load(path / f"{name}.npy") for name in _ARRAYS}
            docs = json.loads((path / "docs.json").read_text(encoding="utf-8"))
            ids = docs["ids"]
            paths = [docs["paths"][i] for i in np.load(path / "path_of.npy").tolist()]
            tags = [docs["tags"][i] for i in np.load(path / "tags_of.npy").tolist()]
            rows: list[Row] = list(zip(paths, tags, strict=True))
            if not len(ids) == len(rows) == arrays["lengths"].size:
                raise ValueError("inconsistent snapshot")
            return Postings.from_arrays(
                ids, rows, arrays["indptr"], arrays["slots"], arrays["tfs"], arrays["lengths"]
            )
        except Exception as exc:  # missing, partial or foreign files mean "read the database"
            log.debug("lexical snapshot not loaded: %s", exc)
            return None

    def save(self, instance: str, generation: int, postings: Postings) -> bool:
        """Write `postings` (compacted first) as this generation's snapshot, then drop the
        older ones. False when it could not be written (disk full, a concurrent save)."""
        if postings.delta or postings.n_alive != postings.n_slots:
            postings = postings.compacted()
        name = self.name(instance, generation)
        tmp = self.root / f".tmp-{name}-{uuid.uuid4().hex[:8]}"
        try:
            tmp.mkdir(parents=True)
            arrays = {
                "indptr": postings.indptr,
                "slots": postings.base_slots,
                "tfs": postings.base_tfs,
                "lengths": postings.lengths,
            }
            for key, array in arrays.items():
                np.save(tmp / f"{key}.npy", array)
            # Each note path and tag list once, and an index per chunk: a 72k-chunk state
            # decodes in a fraction of the time a list of (path, tags) pairs takes.
            distinct: dict[str, dict[str | None, int]] = {"paths": {}, "tags": {}}
            index_of = {
                key: np.fromiter(
                    (distinct[key].setdefault(row[k], len(distinct[key])) for row in postings.rows),
                    dtype=np.int32,
                    count=len(postings.rows),
                )
                for k, key in enumerate(("paths", "tags"))
            }
            np.save(tmp / "path_of.npy", index_of["paths"])
            np.save(tmp / "tags_of.npy", index_of["tags"])
            docs = {"ids": postings.ids, **{key: list(d) for key, d in distinct.items()}}
            (tmp / "docs.json").write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.root / name)
        except OSError as exc:
            log.debug("lexical snapshot not saved: %s", exc)
            shutil.rmtree(tmp, ignore_errors=True)
            return False
        self._drop_older(instance, generation, name)
        return True

    def _drop_older(self, instance: str, generation: int, keep: str) -> None:
        newer = {self.name(instance, g) for g in self.generations(instance) if g > generation}
        for old in self.root.iterdir():
            # Another process may be writing a .tmp- dir right now; only old ones are debris.
            with suppress(OSError):
                if old.name.startswith(".tmp-"):
                    if time.time() - old.stat().st_mtime > _STALE_TMP_S:
                        shutil.rmtree(old, ignore_errors=True)
                elif old.name != keep and old.name not in newer:
                    shutil.rmtree(old, ignore_errors=True)
