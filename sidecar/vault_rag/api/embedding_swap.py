"""Hand a complete new index (built beside the old one, `services/embedding_rebuild.py`) over
to the running server: stop admitting requests to the old state, let those already running on
it finish (answers streaming, searches), close it, move the old index files aside and the new
ones in, keep the choice, open the state again. If the new one does not open, the old files go
back.

Requests from the moment the drain starts until the new state is open get 503 `switching` (not
`starting`, with Retry-After): the plugin retries. `GET /v1/status` and `GET
/v1/settings/embeddings` still answer from the old state during the drain
(`serving/in_flight.admit_reader`: a read the drain does not wait for), the switch's `message`
saying why; from the end of the drain until the new state is open they too get 503. The drain
waits at most `server_switch_drain_timeout` seconds; the requests still running then are asked
to stop (an answer stream ends with `error` `{"code": "switched"}`) and get `ABORT_GRACE`
seconds to unwind before the index is closed under whatever is left.
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

# After a timed-out drain, how long the requests asked to stop get to unwind (a cancelled answer
# returns within a moment; a search in a worker thread cannot be cancelled but takes well under
# this). Not a setting: it only bounds a wait for work already told to end.
ABORT_GRACE = 10.0

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
    app.state.switching = (
        "switching the embedding model: finishing the answers under way, then opening the new index"
    )
    try:
        _drain(old, settings.server_switch_drain_timeout)
        app.state.switching = "switching the embedding model: opening the new index (a few seconds)"
        app.state.server = None
        _seal(old)
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


def _drain(old: Any, timeout: float) -> None:
    """Admit no more requests to `old` and wait for those running on it (the new ones get 503
    `switching` meanwhile); past `timeout`, ask the rest to stop."""
    old.in_flight.close()
    if old.in_flight.drain(timeout):
        return
    running = old.in_flight.abort()
    log.warning(
        "embedding switch: %d request(s) still running after %.0f s; asked them to stop",
        running,
        timeout,
    )
    if not old.in_flight.drain(ABORT_GRACE):
        left = old.in_flight.running
        log.warning("embedding switch: closing the old index under %d request(s)", left)


def _seal(old: Any) -> None:
    """No more status reads of `old` (they went on during the drain); wait for those reading."""
    if not old.in_flight.seal(ABORT_GRACE):
        log.warning("embedding switch: closing the old index under a status read")


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
