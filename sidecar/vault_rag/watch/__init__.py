"""The vault watcher: changes made outside Obsidian reach the index in debounced batches."""

from vault_rag.watch.watcher import VaultWatcher, is_note_path

__all__ = ["VaultWatcher", "is_note_path"]
