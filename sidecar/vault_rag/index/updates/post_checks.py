"""What a `PUT /v1/notes` batch holds, and whether it may be indexed at all (see
`index/updates/sync.py`): checked for the whole batch before anything of it is stored, so a refused
batch leaves the index as it was."""

from __future__ import annotations

from dataclasses import dataclass

from vault_rag.vault.exclusions import is_excluded
from vault_rag.vault.reader import is_note_path


@dataclass
class PostedNote:
    """One note of a `PUT /v1/notes` batch, as the plugin resolved it."""

    path: str  # normalised, vault-relative
    content: str  # frontmatter block (if any) + body with embeds inlined
    embeds: list[str]  # normalised paths of the notes inlined, transitively
    mtime: float | None  # ms since the epoch of the file the plugin read


class PostRefused(Exception):
    """The whole batch was refused and nothing of it stored; `code` says why."""

    def __init__(self, code: str, message: str, paths: list[str]) -> None:
        super().__init__(message)
        self.code = code
        self.paths = paths


def refuse_posted(notes: list[PostedNote], ignores: tuple[str, ...], on_disk: set[str]) -> None:
    """Raise `PostRefused` for a batch the index must not take.

    - `excluded`: an excluded folder is private; its notes are never stored, whoever sends them.
    - `no_file`: the plugin only posts notes that exist in the vault, so a note with no file
      at its path in the vault this sidecar serves means the two disagree (most often the
      sidecar serves another folder than Obsidian's vault, or the note was deleted or moved
      just after the post). Keeping it would make the index differ from the vault (the
      vault is the source of truth: the start-up scan would drop it again, silently) and
      hide the misconfiguration, so it is refused at once, naming the paths.
    """
    excluded = [n.path for n in notes if is_excluded(n.path, ignores)]
    if excluded:
        raise PostRefused(
            "excluded",
            f"{len(excluded)} note(s) are in excluded folders; nothing was stored",
            excluded,
        )
    missing = [n.path for n in notes if is_note_path(n.path, ignores) and n.path not in on_disk]
    if missing:
        raise PostRefused(
            "no_file",
            f"{len(missing)} note(s) have no file in the sidecar's vault; nothing was stored "
            "(is the sidecar serving the same folder as Obsidian?)",
            missing,
        )
