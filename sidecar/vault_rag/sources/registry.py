"""Which source kind reads which file: the kinds by name, chosen by the `index_kinds` setting
and looked up by file suffix. The vault listing, the indexer and the watcher ask this registry
which files to index, so a new kind is one entry in `KINDS` (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from vault_rag.settings import Settings
from vault_rag.sources.base import SourceKind
from vault_rag.sources.canvas import CanvasKind
from vault_rag.sources.markdown import MarkdownKind
from vault_rag.sources.pdf import PdfKind

# name → how to build the kind from the settings (its limits). `index_kinds` names them.
KINDS: dict[str, Callable[[Settings], SourceKind]] = {
    "md": lambda settings: MarkdownKind(),
    "pdf": PdfKind.from_settings,
    "canvas": lambda settings: CanvasKind(),
}


class SourceRegistry:
    """The enabled kinds, by suffix (lower case, with the dot)."""

    def __init__(self, kinds: Iterable[SourceKind]) -> None:
        self.kinds = tuple(kinds)
        self.by_suffix = {suffix: kind for kind in self.kinds for suffix in kind.suffixes}
        self.suffixes = tuple(sorted(self.by_suffix))

    def kind_for(self, rel: str) -> SourceKind | None:
        """The kind that reads `rel`, or None for a file no enabled kind reads."""
        lower = rel.lower()
        for suffix, kind in self.by_suffix.items():
            if lower.endswith(suffix):
                return kind
        return None

    def kind_name(self, rel: str) -> str:
        kind = self.kind_for(rel)
        return kind.name if kind else ""


def source_registry(settings: Settings | None = None) -> SourceRegistry:
    """The kinds `index_kinds` enables (every known kind by default), built with the settings'
    limits. Markdown notes are always read."""
    settings = settings or Settings.model_construct()  # the defaults, no file or environment
    names = dict.fromkeys(["md", *settings.index_kinds])
    return SourceRegistry(KINDS[name](settings) for name in names if name in KINDS)


def markdown_only() -> SourceRegistry:
    """Markdown notes alone (what the index read before source kinds existed)."""
    return SourceRegistry([MarkdownKind()])
