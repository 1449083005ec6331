"""What an indexing run reports and works on: its summary, its progress callbacks and the
result of scanning the vault."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from vault_rag.index.manifest import NoteRecord

__all__ = ["IndexSummary", "Progress", "ScanResult"]


@dataclass
class IndexSummary:
    notes_seen: int = 0
    notes_changed: int = 0  # new or edited on disk
    notes_reindexed: int = 0  # changed + their embedders
    notes_deleted: int = 0
    notes_renamed: int = 0
    chunks_embedded: int = 0  # sent to the model
    chunks_reused: int = 0  # vector taken from the cache by content hash
    chunks_pending: int = 0  # still waiting for a vector (interrupted or limited run)
    seconds: float = 0.0
    warnings: int = 0
    deleted_why: str = ""  # e.g. " (excluded 3, posted with no file 2)": see ScanResult

    def line(self) -> str:
        return (
            f"notes seen {self.notes_seen} / changed {self.notes_changed} / "
            f"deleted {self.notes_deleted}{self.deleted_why} / renamed {self.notes_renamed}; "
            f"chunks embedded {self.chunks_embedded} / reused {self.chunks_reused}"
            + (f" / pending {self.chunks_pending}" if self.chunks_pending else "")
            + f"; {self.seconds:.1f} s"
        )


@dataclass
class Progress:
    """Callbacks for a progress display; all optional."""

    on_phase: Callable[[str, int], None] = lambda phase, total: None
    on_advance: Callable[[int], None] = lambda n: None


@dataclass
class ScanResult:
    seen: list[str] = field(default_factory=list)
    changed: dict[str, NoteRecord] = field(default_factory=dict)  # new or edited
    touched: list[NoteRecord] = field(default_factory=list)  # same bytes, new stat
    deleted: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # old → new
    # Of `deleted`, the notes whose file is still there but now ignored or excluded, and the
    # notes that were posted (`PUT /v1/notes`) while no file existed (an older sidecar kept
    # them until a restart): said apart, so a start-up never just reports "deleted 527".
    excluded: list[str] = field(default_factory=list)
    posted_gone: list[str] = field(default_factory=list)

    def deleted_why(self) -> str:
        parts = [f"excluded {len(self.excluded)}"] if self.excluded else []
        if self.posted_gone:
            parts.append(f"posted with no file {len(self.posted_gone)}")
        return f" ({', '.join(parts)})" if parts else ""

    def detect_renames(self, known: dict[str, NoteRecord]) -> None:
        """A deleted note whose bytes reappear under a new path is a rename. The vector cache
        makes re-keying free either way; this keeps the summaries honest."""
        by_hash = {r.file_hash: p for p, r in self.changed.items() if p not in known}
        for old in self.deleted:
            new = by_hash.get(known[old].file_hash)
            if new:
                self.renamed[old] = new
