"""Check a data dir and recover from damaged files.

The vault is the source of truth: the index (`manifest.sqlite3`, `chroma/`, `lexical/`) can
always be rebuilt from it, so a damaged index part is moved aside (`<name>.damaged-<time>`)
and rebuilt by the next index run (the server's start-up scan, `vault-rag index`). The
manifest caches every vector by content hash, so a damaged `chroma/` or `lexical/` costs no
model call: the indexer's reconcile refills them from the manifest.

The conversation and feedback stores (`threads.sqlite3`, `feedback.sqlite3`) cannot be
rebuilt from the vault. They are never deleted: a damaged one is moved aside the same way
(kept for the user or a recovery tool), reported, and a fresh empty one starts.

`quick_check` (at every open) looks at headers and reads each database's schema: enough for a
file overwritten or truncated at its start; `full_check` (`vault-rag doctor`) also runs
SQLite's `integrity_check`, opens Chroma, loads the lexical index and compares the counts.

A full disk, a read-only mount, a missing permission or an I/O error is not damage
(`storage/disk_faults.py`): every check raises `DataDirUnavailableError` for it and nothing is
moved. Only a check that fails on a file that could be read sets that file aside.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_rag.storage.disk_faults import check_room, disk_fault

SQLITE_HEADER = b"SQLite format 3\x00"
DAMAGE_SEEN = "damage.seen"  # written by a server that met damage while it ran


@dataclass(frozen=True)
class Part:
    name: str  # what it is, for people
    path: str  # relative to the data dir: a file, or a directory
    db: str | None  # the SQLite file to check, relative to the data dir
    rebuildable: bool  # from the vault


PARTS = (
    Part("index manifest", "manifest.sqlite3", "manifest.sqlite3", True),
    Part("vector store (Chroma)", "chroma", "chroma/chroma.sqlite3", True),
    Part("lexical index (BM25)", "lexical", "lexical/lexical.sqlite3", True),
    # a code source's relations (`graph_store/`): filled again by its next index run
    Part("code graph", "graph.sqlite3", "graph.sqlite3", True),
    Part("conversations", "threads.sqlite3", "threads.sqlite3", False),
    Part("answers and ratings", "feedback.sqlite3", "feedback.sqlite3", False),
)


@dataclass
class Finding:
    part: Part
    problem: str | None  # None: healthy (or absent)

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # facts that are no damage (counts)

    @property
    def damaged(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    def replace(self, finding: Finding) -> None:
        """Put `finding` in the place of the one about the same part."""
        self.findings = [finding if f.part == finding.part else f for f in self.findings]


class DamagedDataError(RuntimeError):
    """A data dir file is damaged and could not be set aside (another process writes it)."""


def sqlite_problem(path: Path, full: bool = False, empty_is_damage: bool = False) -> str | None:
    """Why `path` is not a usable SQLite database (None when it is, or when it is absent).
    `empty_is_damage`: the index's databases get their schema the moment they are created, so
    0 bytes is a loss; a conversation store's file is legitimately empty until its first turn."""
    if not path.exists():
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        fault = disk_fault(exc, path.parent)
        if fault is not None:
            raise fault from exc
        return f"cannot be read: {exc.strerror or exc}"
    if not head:
        return "file is empty (truncated to 0 bytes)" if empty_is_damage else None
    if head != SQLITE_HEADER[: len(head)]:
        return "file is not a database (its header is overwritten)"
    if 0 < len(head) < len(SQLITE_HEADER):
        return "file is truncated"
    try:
        db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=10)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if full:
                rows = [r[0] for r in db.execute("PRAGMA integrity_check").fetchall()]
                if rows != ["ok"]:
                    return "integrity check failed: " + "; ".join(rows[:3])
        finally:
            db.close()
    except sqlite3.Error as exc:
        fault = disk_fault(exc, path.parent)  # (a full disk fails opening -wal or -shm)
        if fault is not None:
            raise fault from exc
        return str(exc)
    return None


def diagnose(data_dir: Path, full: bool = False) -> Report:
    report = Report()
    for part in PARTS:
        problem = sqlite_problem(data_dir / part.db, full, part.rebuildable) if part.db else None
        report.findings.append(Finding(part, problem))
    return report


def set_aside(path: Path, stamp: str) -> Path:
    """Rename `path` (and a SQLite file's -wal/-shm) to `<name>.damaged-<stamp>`."""
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    path.rename(target)
    for suffix in ("-wal", "-shm", "-journal"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target


def repair(data_dir: Path, report: Report, extra: Sequence[Part] = ()) -> Report:
    """Move every damaged part (and the `extra` parts known to fail) aside; say what was done.
    Raises `DataDirUnavailableError` instead when the disk is full or read-only."""
    check_room(data_dir)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parts = [f.part for f in report.damaged] + [p for p in extra if p not in report.damaged]
    for part in dict.fromkeys(parts):
        source = data_dir / part.path
        if not source.exists():
            continue
        moved = set_aside(source, stamp)
        problem = next((f.problem for f in report.damaged if f.part == part), "it failed to open")
        if part.rebuildable:
            then = "it is rebuilt from the vault by the next index run"
        else:
            then = (
                "it cannot be rebuilt from the vault, so it is kept there; a new empty one starts"
            )
        report.actions.append(
            f"{part.name} ({part.path}) is damaged ({problem}): moved aside to {moved.name}; {then}"
        )
    return report


def recover(data_dir: Path, lock: Callable[[], Any] | None = None) -> list[str]:
    """The quick check at every open (the full one when a server saw damage while it ran:
    `note_damage_seen`): set damaged parts aside; the actions taken (logged)."""
    marker = data_dir / DAMAGE_SEEN
    seen = marker.exists()
    report = diagnose(data_dir, full=seen)
    actions = _repair_locked(data_dir, report, [], lock) if report.damaged else []
    if seen:
        marker.unlink(missing_ok=True)
    return actions


def note_damage_seen(data_dir: Path, what: str) -> None:
    """A running server met damage the open-time check cannot see (a page damaged in the
    middle of a database): the next open runs the full check and repairs it."""
    with suppress(OSError):  # (a full disk: the request's message still says what to run)
        (data_dir / DAMAGE_SEEN).write_text(what + "\n", encoding="utf-8")


def damaged_database(error: BaseException) -> str | None:
    """SQLite's message when `error` is damage it found in a file (SQLITE_CORRUPT or
    SQLITE_NOTADB), else None. A page damaged in the middle of a database passes the open-time
    check and fails the first query that reads it."""
    if isinstance(error, sqlite3.DatabaseError):
        code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
        if code in (11, 26):
            return str(error)
    return None


def refuse_damage(data_dir: Path) -> None:
    """For commands that only read: raise `DamagedDataError` when a part is damaged, moving
    nothing (`vault-rag doctor --repair` or the next `serve` / `index` repairs)."""
    report = diagnose(data_dir)
    if report.damaged:
        what = "; ".join(f"{f.part.path}: {f.problem}" for f in report.damaged)
        raise DamagedDataError(
            f"the data dir {data_dir} has damaged files ({what}); this command only reads, so "
            "nothing was moved: run `vault-rag doctor --repair` (or `vault-rag index`)"
        )


def recover_after_failure(
    data_dir: Path, error: BaseException, lock: Callable[[], Any] | None = None
) -> list[str]:
    """Opening the index failed although the quick check passed: check fully, and when the
    failure is Chroma's own (its SQLite file is fine) set the vector store aside too. A disk
    fault behind the failure raises `DataDirUnavailableError` and nothing is moved."""
    fault = disk_fault(error, data_dir)
    if fault is not None:
        raise fault from error
    report = diagnose(data_dir, full=True)
    extra: list[Part] = []
    if not report.damaged and _looks_like_chroma(error):
        extra = [PARTS[1]]
    if not report.damaged and not extra:
        return []
    return _repair_locked(data_dir, report, extra, lock)


def _looks_like_chroma(error: BaseException) -> bool:
    chain: BaseException | None = error
    while chain is not None:
        if type(chain).__module__.startswith("chromadb") or "chroma" in str(chain).lower():
            return True
        chain = chain.__cause__ or chain.__context__
    return False


def _repair_locked(
    data_dir: Path, report: Report, extra: list[Part], lock: Callable[[], Any] | None
) -> list[str]:
    from vault_rag.index.lock import IndexLockedError, WriterLock

    try:
        held = WriterLock(data_dir).acquire() if lock is None else lock()
    except IndexLockedError as exc:
        what = "; ".join(f"{f.part.path}: {f.problem}" for f in report.damaged) or "chroma"
        raise DamagedDataError(
            f"the data dir {data_dir} has damaged files ({what}) but {exc}; "
            "stop it, then run `vault-rag doctor --repair` (or start the server again)"
        ) from exc
    try:
        repair(data_dir, report, extra)
    finally:
        if held is not None and lock is None:
            held.release()
    return report.actions


def full_check(data_dir: Path, open_index: Callable[[], Any] | None = None) -> Report:
    """Everything `vault-rag doctor` looks at. `open_index` opens the index (for the store and
    lexical checks and the counts); it is skipped when a part is already known damaged."""
    report = diagnose(data_dir, full=True)
    if report.damaged or open_index is None or not (data_dir / "manifest.sqlite3").exists():
        return report
    try:
        index = open_index()
    except Exception as exc:
        part = PARTS[1] if _looks_like_chroma(exc) else PARTS[0]
        report.replace(Finding(part, f"cannot be opened: {type(exc).__name__}: {exc}"))
        return report
    try:
        counts = index.manifest.counts()
        stored, lexical = index.store.count(), index.lexical.count()
        try:
            index.lexical.search("doctor", 1)  # loads (or builds) the BM25 snapshot
        except Exception as exc:
            report.findings.append(Finding(PARTS[2], f"cannot be searched: {exc}"))
        report.notes.append(
            f"manifest: {counts['notes']} notes, {counts['chunks']} chunks "
            f"({counts['embedded']} embedded, {counts['pending']} waiting for a vector); "
            f"vector store: {stored}; lexical index: {lexical}"
        )
        # A store emptied or deleted behind the manifest's back (`chroma/`, `lexical/` removed)
        # is damage: searches miss everything until it is refilled, which `--repair` does from
        # the manifest's vector cache, with no model call. Smaller differences are a writer's
        # work in progress (a running server) and are left to the next index run.
        if counts["embedded"] and not stored:
            report.replace(Finding(PARTS[1], _emptied(stored, counts["embedded"])))
        if counts["chunks"] and not lexical:
            report.replace(Finding(PARTS[2], _emptied(lexical, counts["chunks"])))
        if (stored, lexical) != (counts["embedded"], counts["chunks"]) and not report.damaged:
            report.notes.append(
                "the vector store or the lexical index disagrees with the manifest: the next "
                "index run reconciles them (no file is damaged)"
            )
    finally:
        index.close()
    return report


def _emptied(held: int, expected: int) -> str:
    return f"holds {held} of the manifest's {expected} passages (emptied or deleted)"
