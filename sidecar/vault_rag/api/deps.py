"""Dependencies of the routes: the server's state, its settings and the bearer-token check."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from vault_rag.api.errors import ApiError
from vault_rag.graph.turns import ThreadTurns
from vault_rag.index.updates.sync import VaultSync
from vault_rag.index.updates.writer import IndexWriter
from vault_rag.index.vault_index import VaultIndex
from vault_rag.services.errors import ServiceError
from vault_rag.services.parts import served_path
from vault_rag.serving.in_flight import InFlight, Lease, NotAdmitted, admit, admit_reader
from vault_rag.settings import Settings
from vault_rag.vault.exclusions import Exclusions
from vault_rag.vault.paths import UnsafePathError, normalize_rel_path
from vault_rag.watch.changes import DiskSync
from vault_rag.watch.watcher import VaultWatcher


@dataclass
class AskCounters:
    running: int = 0
    completed: int = 0
    cancelled: int = 0
    failed: int = 0


@dataclass
class ServerState:
    """The long-lived objects of one running server (built by the app's lifespan)."""

    settings: Settings
    index: VaultIndex
    writer: IndexWriter
    notes: VaultSync  # every note change (routes, watcher, start-up), on the writer
    sync: DiskSync  # disk batches and the start-up reconcile, on the writer
    exclusions: Exclusions  # excluded folders (the setting's and the plugin's)
    watcher: VaultWatcher | None  # None: not following the disk (off, or could not start)
    resources: Any  # graph.config.Resources
    prior: Any  # feedback.prior.FeedbackPrior shared by every search path; None: off
    checkpointer: Any  # an AsyncSqliteSaver on <data dir>/threads.sqlite3
    graph: Any  # the compiled answer graph with that checkpointer (for reading threads)
    # Searches at once (`server_search_concurrency`); the answer path runs outside it.
    search_capacity: Any = None  # anyio.CapacityLimiter, made in the server's event loop
    asks: AskCounters = field(default_factory=AskCounters)
    turns: ThreadTurns = field(default_factory=ThreadTurns)  # one turn at a time per thread
    # The chat model chosen in Obsidian (`/v1/settings/models`), laid over the settings the
    # server started with (`configured_settings`); None: the settings file's own.
    model_choice: Any = None
    configured_settings: Settings | None = None
    # The sources beside the vault (`source_indexes/service.py`, `ServedSources`): their
    # indexes, opened on first search, and their start-up scan; None: not started (tests
    # building a state).
    sources: Any = None
    # The requests running on this state (`serving/in_flight.py`): a switch of embedding
    # model lets them finish before it closes the index. Never carried over to a new state.
    in_flight: InFlight = field(default_factory=InFlight)


def _admitted(admitter: Callable[[Any], Lease], request: Request) -> Lease:
    """A lease from `admitter` (`admit` or `admit_reader`), or 503 `starting` / `switching`
    (with Retry-After) when there is no state to hold."""
    try:
        return admitter(request.app.state)
    except NotAdmitted as exc:
        raise ApiError(503, exc.code, exc.message) from exc


async def get_lease(request: Request) -> AsyncIterator[Lease]:
    """The request's hold on the server state, kept until its response has been sent (a
    streamed answer's last event included: FastAPI ends a `yield` dependency after the
    response)."""
    with _admitted(admit, request) as lease:
        yield lease


async def get_reader_lease(request: Request) -> AsyncIterator[Lease]:
    """As `get_lease`, for a quick read-only route (`GET /v1/status`, `GET
    /v1/settings/embeddings`): while a switch of embedding model drains the old state it still
    reads that state (`admit_reader`), without holding the drain up; 503 only while there is
    no state at all."""
    with _admitted(admit_reader, request) as lease:
        yield lease


# `scope="request"`: the lease is given back after the response has been sent, so a streamed
# answer holds it to its last event (FastAPI >= 0.121; "function" would end it before).
LeaseDep = Annotated[Lease, Depends(get_lease, scope="request")]


async def get_state(lease: LeaseDep) -> ServerState:
    return lease.state  # type: ignore[no-any-return]


async def get_reader_state(
    lease: Annotated[Lease, Depends(get_reader_lease, scope="request")],
) -> ServerState:
    return lease.state  # type: ignore[no-any-return]


def get_settings(state: Annotated[ServerState, Depends(get_state)]) -> Settings:
    return state.settings


_bearer = HTTPBearer(auto_error=False, description="The token `vault-rag token` prints.")


def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    expected: str = request.app.state.token
    given = credentials.credentials if credentials is not None else ""
    # Constant-time comparison: the token must not leak through response timing.
    if not given or not hmac.compare_digest(given.encode(), expected.encode()):
        raise ApiError(
            401,
            "unauthorized",
            "missing or wrong bearer token (see `vault-rag token --vault PATH`)",
            headers={"WWW-Authenticate": "Bearer"},
        )


def note_path(raw: str) -> str:
    """The canonical vault-relative form of a note path from a request; 400 when unsafe."""
    try:
        path = normalize_rel_path(raw)
    except UnsafePathError as exc:
        raise ApiError(400, "unsafe_path", str(exc), {"path": raw}) from exc
    return path


def served_note_path(raw: str, state: ServerState) -> str:
    """`note_path`, and 403 `excluded` for a path an excluded folder covers: such a note is
    never read, searched around or stored, and the same answer comes whether it exists or not."""
    with translated():
        return served_path(raw, state)


@contextmanager
def translated() -> Iterator[None]:
    """A service's `ServiceError` as the API's error (same status, code, message, detail)."""
    try:
        yield
    except ServiceError as exc:
        raise ApiError(exc.status, exc.code, exc.message, exc.detail) from exc


State = Annotated[ServerState, Depends(get_state)]
ReaderState = Annotated[ServerState, Depends(get_reader_state)]  # read-only, also mid-switch
SettingsDep = Annotated[Settings, Depends(get_settings)]
