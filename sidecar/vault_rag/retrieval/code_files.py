"""Code collections: the file that implements what the question asks about, ahead of the files
that only declare it, test it or describe it in prose (issue 27). Only units of the code kind
are touched: a vault's notes never are, so a vault's search is unchanged.

- **A file ranks with its header and its test, first.** When a header unit and a unit of its
  partner source file (the same name beside it, or in the mirrored folder) are both
  candidates, the header unit's score is added to the partner's best unit: the declaration
  says what, the implementation how. A test file's unit does the same for the file it tests
  by name (`bloom_test.cc` → `bloom.cc`, `app.test.ts` → `app.ts`).
- **Declared here, defined there.** A C/C++ header unit lists the functions it declares
  (`declares`, `sources/code/pairs.py`). When such a unit is a candidate, its score is added
  to the units defining those functions in another file (found by name in the collection's
  own symbols): a big header of declarations and comments (`zlib.h`, `db_impl.h`) matches a
  question's words, the `.c`/`.cc` holds the answer. A name defined in more than one other
  file is ambiguous and lends nothing. A definition that was no candidate is added, just
  above the header unit.
- **Evidence adds up**, as RRF adds the lists a unit is in: a definition that matched on its
  own and is pointed at by a matching declaration ranks above both (`docs/retrieval.md`
  measures this against taking the maximum).
- **Tests and prose after the code, when close.** A code collection also holds its tests and
  the files no grammar reads (Markdown, text, build files): relevant, but the question about a
  code tree asks where something is done. Their scores are multiplied by `ROLE_FACTOR`, a
  bound like the feedback prior's: only results within about 10 % of each other swap.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import MutableMapping
from pathlib import PurePosixPath

from vault_rag.chunking.types import Chunk
from vault_rag.index.vault_index import VaultIndex
from vault_rag.sources.code.languages import spec_for
from vault_rag.sources.code.pairs import HEADER_SUFFIXES, declaration_key, partners

ROLE_FACTOR = 0.9  # a test or prose file's unit in a code collection
_EPSILON = 1e-6  # an added definition ranks just above the unit that lent to it
# `test/…`, `foo_test.cc`, `test_foo.py`, `foo.test.ts`, `FooTest.java`, `foo_unittest.cc`
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec)/|(^|/)test_[^/]*$|_(unit)?tests?\.[^/]*$"
    r"|[._-](test|spec)\.[^/.]+$|[a-z0-9]Tests?\.[^/.]+$"
)
_DEFINITIONS: weakref.WeakKeyDictionary[VaultIndex, tuple[int, dict[str, list[tuple[str, str]]]]]
_DEFINITIONS = weakref.WeakKeyDictionary()
_NAMES: weakref.WeakKeyDictionary[VaultIndex, tuple[int, frozenset[str] | None]]
_NAMES = weakref.WeakKeyDictionary()


def is_test_path(path: str) -> bool:
    return _TEST_PATH.search(path) is not None


def role_factor(chunk: Chunk) -> float:
    """`ROLE_FACTOR` for a code collection's test file or file no grammar reads, else 1."""
    if chunk.extra.get("kind") != "code":
        return 1.0
    if spec_for(chunk.note_path) is None or is_test_path(chunk.note_path):
        return ROLE_FACTOR
    return 1.0


def rank_code_files(
    index: VaultIndex,
    final: MutableMapping[str, float],
    chunks: MutableMapping[str, Chunk],
) -> list[str]:
    """Apply both rules (module doc) to the fused scores `final` in place; definitions added
    as candidates are fetched into `chunks`. Returns the ids added. Nothing happens unless a
    candidate is a code unit."""
    code = [i for i in final if i in chunks and chunks[i].extra.get("kind") == "code"]
    if not code:
        return []
    for chunk_id in code:
        final[chunk_id] *= role_factor(chunks[chunk_id])
    lent = _lent_to_partners(code, final, chunks)
    declaring = [i for i in code if chunks[i].extra.get("declares")]
    definitions = definitions_of(index) if declaring else {}
    for chunk_id in declaring:
        header = chunks[chunk_id]
        for name in header.extra["declares"]:
            found = definitions.get(str(name), [])
            files = {path for path, _ in found}
            if len(files) != 1 or header.note_path in files:
                continue  # ambiguous, or defined in the header itself
            for _, unit_id in found:
                lent[unit_id] = max(lent.get(unit_id, 0.0), final[chunk_id])
    added = [i for i in lent if i not in chunks]
    chunks.update(index.manifest.chunks(added))
    for unit_id, score in lent.items():
        if unit_id not in chunks:
            continue  # (a stale entry: the manifest no longer has it)
        own = final.get(unit_id, 0.0)
        # evidence adds up, as RRF adds the lists a unit is in: a definition that matched
        # on its own and is pointed at by a matching declaration ranks above both; one that
        # was no candidate ranks just above the unit that lent to it
        final[unit_id] = own + score + _EPSILON
    return [i for i in added if i in chunks]


def _lent_to_partners(
    code: list[str], final: MutableMapping[str, float], chunks: MutableMapping[str, Chunk]
) -> dict[str, float]:
    """A header or test unit's score for the best candidate of its partner (a header's
    `.cc`/`.c`: `partners`, `sources/code/pairs.py`; a test's tested file: `tested_by`) when
    the partner is a candidate too: the pair ranks together, the implementation first."""
    best: dict[str, str] = {}
    for chunk_id in code:
        path = chunks[chunk_id].note_path
        if path not in best or final[chunk_id] > final[best[path]]:
            best[path] = chunk_id
    lent: dict[str, float] = {}
    for chunk_id in code:
        path = chunks[chunk_id].note_path
        # (any unit of a header, its comment windows too, which record no `related_file`)
        header = path.lower().endswith(HEADER_SUFFIXES)
        candidates = partners(path) if header else tested_by(path)
        partner = next((p for p in candidates if p in best), None)
        if partner is not None:
            target = best[partner]
            lent[target] = max(lent.get(target, 0.0), final[chunk_id])
    return lent


_TEST_NAME = (
    (re.compile(r"^(.+)_(unit)?tests?(\.[^.]+)$"), r"\1\3"),  # db_test.cc → db.cc
    (re.compile(r"^test_(.+)$"), r"\1"),  # test_sync.py → sync.py
    (re.compile(r"^(.+)[.-](test|spec)(\.[^.]+)$"), r"\1\3"),  # app.test.ts → app.ts
    (re.compile(r"^(.+[a-z0-9])Tests?(\.[^.]+)$"), r"\1\2"),  # FooTest.java → Foo.java
)


def tested_by(path: str) -> list[str]:
    """The file a test file tests, by its name, in the same folder (`util/bloom_test.cc` →
    `util/bloom.cc`); [] for a file that is no test by name."""
    folder, _, name = path.rpartition("/")
    found = []
    for pattern, replacement in _TEST_NAME:
        if pattern.match(name):
            tested = pattern.sub(replacement, name)
            found.append(f"{folder}/{tested}" if folder else tested)
    return found


def definitions_of(index: VaultIndex) -> dict[str, list[tuple[str, str]]]:
    """The collection's function definitions by `declaration_key` → [(file, unit id)], built
    from the manifest once per revision of it."""
    revision = index.manifest.revision()
    cached = _DEFINITIONS.get(index)
    if cached is not None and cached[0] == revision:
        return cached[1]
    table: dict[str, list[tuple[str, str]]] = {}
    rows = index.manifest.db.execute(
        "SELECT id, note_path, json_extract(data, '$.extra.symbol') FROM chunks "
        "WHERE json_extract(data, '$.extra.kind') = 'code' "
        "AND json_extract(data, '$.extra.symbol_kind') = 'function'"
    ).fetchall()
    for unit_id, path, symbol in rows:
        if symbol:
            table.setdefault(declaration_key(str(symbol).split("::")), []).append((path, unit_id))
    _DEFINITIONS[index] = (revision, table)
    return table


def names_of(index: VaultIndex) -> frozenset[str] | None:
    """What a question may call a code collection's things by (routing, `routing.py`): each
    symbol and every qualified tail of it (`leveldb::DBImpl::Write`, `DBImpl::Write`,
    `Write`), and each file's name and stem (`crc32.c`, `crc32`). None: the collection has no
    code units. Built from the manifest once per revision of it."""
    revision = index.manifest.revision()
    cached = _NAMES.get(index)
    if cached is not None and cached[0] == revision:
        return cached[1]
    rows = index.manifest.db.execute(
        "SELECT note_path, json_extract(data, '$.extra.symbol') FROM chunks "
        "WHERE json_extract(data, '$.extra.kind') = 'code'"
    ).fetchall()
    names: set[str] = set()
    for path, symbol in rows:
        file = PurePosixPath(path)
        names.update((file.name, file.stem))
        parts = str(symbol).split("::") if symbol else []
        names.update("::".join(parts[i:]) for i in range(len(parts)))
    found = frozenset(names) if rows else None
    _NAMES[index] = (revision, found)
    return found
