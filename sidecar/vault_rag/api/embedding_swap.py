"""Hand a complete new index (built beside the old one, `services/embedding_rebuild.py`) over
to the running server: stop the old state, move the old index files aside and the new ones in,
keep the choice, open the state again. If the new one does not open, the old files go back.

Requests in the few seconds this takes get 503 `switching` (not `starting`): the plugin retries.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

from vault_rag.index.dense.snapshot import SNAPSHOT_FILE
from vault_rag.index.lock import LOCK_FILE
from vault_rag.index.vault_index import LEXICAL_DIR, MANIFEST_FILE
from vault_rag.services.embedding_choice import (
    CHOICE_FILE,
    EmbeddingChoice,
    load_choice,
    save_choice,
)
from vault_rag.services.embedding_rebuild import PREVIOUS_DIR
from vault_rag.settings import Settings

log = logging.getLogger(__name__)

# The index's own files in the data dir (besides whatever the staging build wrote).
INDEX_PARTS = (
    MANIFEST_FILE,
    f"{MANIFEST_FILE}-wal",
    f"{MANIFEST_FILE}-shm",
    "chroma",
    LEXICAL_DIR,
    SNAPSHOT_FILE,
)


def _parts(staging: Path) -> list[str]:
    names = {p.name for p in staging.iterdir()} - {LOCK_FILE}
    return sorted(names | set(INDEX_PARTS))


def _move(names: list[str], source: Path, target: Path) -> None:
    target.mkdir(mode=0o700, exist_ok=True)
    for name in names:
        if (source / name).exists():
            os.replace(source / name, target / name)


def swap_in(app: Any, staging: Path, settings: Settings, choice: EmbeddingChoice) -> None:
    """Replace the server's index with the one in `staging` built for `settings`."""
    _open_state, _close_state = app.state.reopen  # api/app.py's
    _configured, _prebuilt, watch, reconcile = app.state.open_args
    old = app.state.server
    data_dir = settings.resolved_data_dir()
    previous = data_dir / PREVIOUS_DIR
    names = _parts(staging)
    kept = load_choice(data_dir)
    app.state.switching = "switching the embedding model: opening the new index (a few seconds)"
    app.state.server = None
    try:
        _close_state(old, True)
        shutil.rmtree(previous, ignore_errors=True)
        _move(names, data_dir, previous)  # the old index, kept until the next switch
        _move(names, staging, data_dir)
        save_choice(data_dir, choice)
        try:
            state = _open_state(settings, None, None, watch, reconcile, app)
        except Exception:
            log.exception("the new index did not open; putting the previous one back")
            _move(names, data_dir, staging)
            _move(names, previous, data_dir)
            if kept is None:
                (data_dir / CHOICE_FILE).unlink(missing_ok=True)
            else:
                save_choice(data_dir, kept)
            state = _open_state(
                old.configured_settings or old.settings, None, None, watch, reconcile, app
            )
            _carry_over(old, state)
            app.state.server = app.state.live_state = state
            raise
        _carry_over(old, state)
        app.state.server = app.state.live_state = state
    finally:
        app.state.switching = None
        shutil.rmtree(staging, ignore_errors=True)


def _carry_over(old: Any, state: Any) -> None:
    """What the new state keeps from the old: conversations, the chat model chosen in Obsidian."""
    state.checkpointer, state.graph = old.checkpointer, old.graph
    state.asks, state.turns = old.asks, old.turns
    state.model_choice = old.model_choice
    if old.model_choice is not None:
        from vault_rag.services.model_choice import apply_choice, replace_resources

        chat = apply_choice(state.settings, old.model_choice)
        state.resources = replace_resources(state.resources, chat)
        state.settings = chat
