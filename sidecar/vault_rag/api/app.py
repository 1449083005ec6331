"""The FastAPI app of `vault-rag serve`: routers under `/v1`, auth, CORS, limits, and the
long-lived objects (index, writer, watcher, answer graph) built once in the lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
from fastapi import APIRouter, Depends, FastAPI
from fastapi.openapi.utils import get_openapi

from vault_rag import __version__
from vault_rag.api.deps import ServerState, require_token
from vault_rag.api.errors import install_error_handlers
from vault_rag.api.middleware import BodyLimitMiddleware, CORSMiddleware, HostCheckMiddleware
from vault_rag.api.routers import (
    answers,
    ask,
    collections,
    devices,
    embeddings,
    exclude,
    health,
    models,
    notes,
    related,
    search,
    sources,
    status,
    threads,
)
from vault_rag.api.schemas import ErrorBody
from vault_rag.feedback.prior import open_prior
from vault_rag.index.stores.base import StoreUnavailableError
from vault_rag.index.updates.sync import VaultSync
from vault_rag.index.updates.writer import IndexWriter
from vault_rag.index.vault_index import VaultIndex
from vault_rag.serving.context import make_indexer, open_index
from vault_rag.serving.server_token import load_or_create_token
from vault_rag.settings import Settings
from vault_rag.source_indexes.service import ServedSources
from vault_rag.sources.registry import source_registry
from vault_rag.vault.exclusions import Exclusions
from vault_rag.watch.changes import DiskSync
from vault_rag.watch.watcher import VaultWatcher

log = logging.getLogger(__name__)

HOST = "127.0.0.1"  # never another interface: the sidecar serves this machine only
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]  # Host header check: no DNS-rebinding access

DESCRIPTION = """The local sidecar of the Vault RAG Obsidian plugin: it owns the vault's index
and the answer graph.

* **Auth**: every route but `/v1/health` needs `Authorization: Bearer <token>`; the token is
  created on first start in the data dir (mode 0600) and printed by `vault-rag token`.
* **CORS**: only the configured origins (`app://obsidian.md`, `capacitor://localhost`,
  `http://localhost` by default) get a grant, Private Network Access preflights included; a
  request from any other origin is refused with 403.
* **Errors** have one shape, `ErrorBody` (`code`, `message`, `detail`), the middleware's
  included: 400 unsafe note path (absolute, `..`) or a `Host` other than 127.0.0.1/localhost
  (`invalid_host`), 401 token, 403 origin not allowed (`origin_not_allowed`), 408 a request
  body that did not arrive in time (`body_timeout`, `server_body_timeout` seconds), 413 body
  too large, 422 invalid JSON or fields (non-finite numbers included), 503 embedding model
  unavailable. `PUT /v1/notes` refuses a whole batch, storing nothing, with 403 `excluded`
  (a note in an excluded folder) or 404 `no_file` (a note with no file in the sidecar's
  vault); `detail.paths` names the notes.
* **MCP**: `/mcp` serves the same vault to other agents over the Model Context Protocol
  (streamable HTTP, stateless; the same token, Host and Origin checks; read-only).
* **Excluded folders** (`/v1/settings/exclude`): the sidecar's `exclude` setting plus the
  list the plugin pushes are never read, indexed or accepted.
"""


def create_app(
    settings: Settings,
    *,
    token: str | None = None,
    index: VaultIndex | None = None,
    resources: Any = None,
    watch: bool | None = None,
    reconcile: bool = True,
) -> FastAPI:
    """The app. Nothing is opened until it starts (so the OpenAPI export needs no vault).

    `index` / `resources`: pre-built objects (tests); the caller then closes the index.
    `watch`: follow disk changes (default: `settings.server_watch`). `reconcile`: scan the
    vault against the manifest at start-up.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            try:
                state = await anyio.to_thread.run_sync(
                    _open_state, settings, index, resources, watch, reconcile, app
                )
            except BaseException as exc:  # for `vault-rag serve` to explain the failed start
                app.state.start_error = exc
                raise
            app.state.live_state = state  # a switch of embedding model replaces it
            stack.push_async_callback(anyio.to_thread.run_sync, _close_live, app, index is None)
            from vault_rag.graph.graph import build_graph
            from vault_rag.graph.run import open_checkpointer

            state.checkpointer = await stack.enter_async_context(
                open_checkpointer(state.index.data_dir)
            )
            state.graph = build_graph(state.checkpointer)
            await stack.enter_async_context(mcp_requests)  # `/mcp` (mcp_server/http.py)
            app.state.server = state
            yield
            app.state.server = None

    app = FastAPI(
        title="Vault RAG sidecar",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # the spec is shared-schemas/openapi.json (scripts/export_openapi.py)
    )
    app.state.token = token
    app.state.server = None
    app.state.remote = None  # the remote listener's hub (`serve --remote-listen`), if it runs
    app.state.start_error = None  # what stopped the start-up, if anything did
    # For a switch of embedding model (`api/embedding_swap.py`): how to open the state again,
    # the rebuild job, and the key the plugin sent (memory only).
    app.state.open_args = (settings, index is not None, watch, reconcile)
    app.state.switching = None  # while the new index is opened: why there is no state
    app.state.reopen = (_open_state, _close_state)
    from vault_rag.services.embedding_rebuild import EmbeddingRebuild

    app.state.embedding_rebuild = EmbeddingRebuild()
    install_error_handlers(app)
    v1 = APIRouter(prefix="/v1")
    v1.include_router(health.router)
    for module in (
        status,
        collections,
        notes,
        search,
        related,
        ask,
        threads,
        answers,
        exclude,
        models,
        embeddings,
        devices,
        sources,
    ):
        v1.include_router(module.router, dependencies=[Depends(require_token)])
    app.include_router(v1)
    from vault_rag.mcp_server.http import mount_mcp

    mcp_requests = mount_mcp(app, settings)  # `/mcp`: the MCP tools, same token and checks
    # Added last = runs first: host check, then CORS (so errors carry the grant), then limits.
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.server_max_body_bytes,
        timeout=settings.server_body_timeout,
    )
    app.add_middleware(CORSMiddleware, allow_origins=list(settings.server_cors_origins))
    app.add_middleware(HostCheckMiddleware, allowed_hosts=ALLOWED_HOSTS)
    app.openapi = lambda: openapi_schema(app)  # type: ignore[method-assign]
    return app


def _open_state(
    settings: Settings,
    index: VaultIndex | None,
    resources: Any,
    watch: bool | None,
    reconcile: bool,
    app: FastAPI,
) -> ServerState:
    """Blocking start-up work (model and Chroma load), run in a worker thread."""
    from vault_rag.graph.config import Resources
    from vault_rag.services.embedding_choice import with_stored_choice

    if index is None:  # the embedding model chosen in Obsidian, kept in the data dir
        settings = with_stored_choice(settings)
    if app.state.token is None:
        app.state.token = load_or_create_token(settings.resolved_data_dir())[0]
    owned = index is None
    index = index or open_index(settings)
    state = None
    prior = None
    try:
        index.check_model()  # a model or store mismatch stops the start, with the CLI's message
        _check_store(index)
        # One feedback prior for every search path (POST /v1/search and the answer graph), so
        # `feedback_prior` switches it for both.
        prior = open_prior(settings.model_copy(update={"data_dir": index.data_dir}))
        exclusions = Exclusions.load(settings, index.data_dir)
        writer = IndexWriter(make_indexer(settings, index), batch_notes=settings.index_batch_notes)
        writer.start()
        notes = VaultSync(writer)
        sync = DiskSync(notes, retry_delay=settings.watch_retry_delay)
        state = ServerState(
            settings=settings,
            index=index,
            writer=writer,
            notes=notes,
            sync=sync,
            exclusions=exclusions,
            watcher=None,
            resources=resources,
            prior=prior,
            checkpointer=None,
            graph=None,
            search_capacity=anyio.CapacityLimiter(settings.server_search_concurrency),
            configured_settings=settings,
        )
        if settings.server_watch if watch is None else watch:
            state.watcher = _start_watcher(settings, index, sync, exclusions.ignores())
        state.sources = ServedSources(settings, index)
        if settings.server_watch if watch is None else watch:
            state.sources.watch()  # before the scan: a change meanwhile is not missed
        if reconcile:
            sync.reconcile()  # after the watcher starts: nothing changing meanwhile is missed
            state.sources.start_scan()  # on its own thread: a big code tree holds up nothing
        if state.resources is None:
            state.resources = Resources.from_settings(settings, index=index, prior=prior)
        if getattr(state.resources, "sources", None) is None:
            state.resources.sources = state.sources
    except BaseException:
        if state is not None:
            _close_state(state, owned)
        else:
            if prior is not None:
                prior.close()
            if owned:
                index.close()
        raise
    return state


def _check_store(index: VaultIndex) -> None:
    """A store that cannot be reached does not stop the start: BM25 serves and the writer
    retries (chunks wait in the manifest). Say so loudly, and in `/v1/status`."""
    check = getattr(index.store, "check", None)
    if check is None:
        return
    try:
        check()
    except StoreUnavailableError as exc:
        index.store_error = str(exc)
        log.error("vector store unavailable, serving BM25 only until it answers: %s", exc)


def _start_watcher(
    settings: Settings, index: VaultIndex, sync: DiskSync, ignores: tuple[str, ...]
) -> VaultWatcher | None:
    watcher = VaultWatcher(
        index.vault_root,
        lambda paths, dirs: sync.submit(paths, dirs),
        ignores=ignores,
        suffixes=source_registry(settings).suffixes,
        debounce=settings.watch_debounce,
        max_delay=settings.watch_max_delay,
    )
    try:
        watcher.start()
    except OSError as exc:  # e.g. the inotify watch limit: serve anyway, without following
        log.warning("cannot watch the vault (%s); changes outside Obsidian need a restart", exc)
        sync.writer.status.last_error = f"watcher: {exc}"
        return None
    return watcher


def _close_live(app: FastAPI, close_index: bool) -> None:
    """At shutdown: stop a switch of embedding model under way, close the state in use."""
    app.state.embedding_rebuild.cancel()
    _close_state(app.state.live_state, close_index)


def _close_state(state: ServerState, close_index: bool) -> None:
    if state.watcher is not None:
        state.watcher.stop()
    state.sync.stop()
    state.writer.stop()
    if state.sources is not None:
        state.sources.close()
    if state.prior is not None:
        state.prior.close()
    if close_index:
        state.index.close()


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema plus the SSE event bodies and the shared error responses."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in (*ask.EVENT_MODELS, ErrorBody):
        body = model.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(body.pop("$defs", {}))
        components[model.__name__] = body
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            extra: dict[str, str] = {}
            if operation.get("security"):
                extra["401"] = "Missing or wrong bearer token"
            if "requestBody" in operation:
                extra["408"] = "The request body did not arrive in time"
                extra["413"] = "Request body too large"
            if "requestBody" in operation or operation.get("parameters"):
                extra["422"] = "Invalid JSON or invalid fields"
            if path.startswith("/v1/notes") or path in ("/v1/status", "/v1/related"):
                extra["400"] = "Unsafe note path (absolute, `..`, empty)"
            if path == "/v1/threads/{thread_id}":
                extra["404"] = "No such conversation"
            if path == "/v1/related":
                extra["404"] = "No such note in the index or the vault"
                extra["503"] = "The vector store cannot be reached"
            if path in ("/v1/search", "/v1/notes"):
                extra["503"] = "The embedding model is unavailable"
            if path == "/v1/notes" and method == "put":
                extra["403"] = "A note is in an excluded folder (`excluded`); nothing stored"
                extra["404"] = "A note has no file in the vault (`no_file`); nothing stored"
            for code, description in extra.items():
                responses[code] = {"description": description, "content": error}
    app.openapi_schema = schema
    return schema
