"""Commands of the sidecar server: serve, token."""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from vault_rag import __version__
from vault_rag.cli.app import DataDirOption, VaultOption, app, err, fail, out
from vault_rag.serving.server_info import ServerRecord, remove_server_record, write_server_record
from vault_rag.serving.server_token import DamagedTokenError, load_or_create_token, token_path
from vault_rag.settings import load_settings
from vault_rag.storage.disk_faults import EXIT_CODE as DISK_FAULT_EXIT
from vault_rag.storage.disk_faults import disk_fault


@app.command()
def serve(
    vault: VaultOption,
    data_dir: DataDirOption = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            help="Port on 127.0.0.1 (default 8765). 0: a free port, chosen now and written to "
            "the data dir's server.json and the handshake (one sidecar per vault, side by side).",
        ),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", help="uvicorn log level: warning, info, debug.")
    ] = "info",
    handshake: Annotated[
        bool,
        typer.Option(
            "--handshake",
            envvar="VAULT_RAG_HANDSHAKE",
            help="Print one line `vault-rag-handshake {url, token, version}` on stdout once "
            "the port is bound: how the Obsidian plugin, which starts the sidecar with "
            "VAULT_RAG_HANDSHAKE=1, gets the token without anyone pasting it.",
        ),
    ] = False,
    remote_listen: Annotated[
        str | None,
        typer.Option(
            "--remote-listen",
            help="Also listen on HOST:PORT for paired devices only (a phone, another laptop; "
            "every message sealed, see docs/remote.md), e.g. 0.0.0.0:8766 or a tailnet "
            "address. Off by default (setting `server_remote_listen`).",
        ),
    ] = None,
) -> None:
    """Run the sidecar for the Obsidian plugin: the HTTP API on 127.0.0.1, the vault watcher
    and the answer graph, on the same index and settings as the other commands."""
    import uvicorn

    from vault_rag.api import HOST, create_app
    from vault_rag.api.header_timeout import header_timeout_protocol
    from vault_rag.api.log_redact import install_redaction
    from vault_rag.embeddings.base import EmbeddingError
    from vault_rag.index.lock import IndexLockedError, WriterLock
    from vault_rag.index.vault_index import ModelMismatchError
    from vault_rag.maintenance.doctor import DamagedDataError, recover
    from vault_rag.vault.exclusions import ExcludeError, Exclusions

    settings = load_settings(
        vault=vault, data_dir=data_dir, server_port=port, server_remote_listen=remote_listen
    )
    data = settings.resolved_data_dir()
    try:  # a clear message now rather than a traceback from the app's start-up
        WriterLock(data).acquire().release()
    except IndexLockedError as exc:
        fail(str(exc))
    # The port is bound before anything is indexed: a port in use fails at once, not after
    # the whole start-up index (uvicorn binds only after the app's start-up has finished).
    sock = bind_port(HOST, settings.server_port)
    bound = sock.getsockname()[1]  # the port itself when --port 0 let the system choose
    remote_sock = None
    if settings.server_remote_listen:
        remote_host, remote_port = parse_listen(settings.server_remote_listen)
        remote_sock = bind_port(remote_host, remote_port)
    try:  # damaged files: set aside (the index is rebuilt from the vault by the start-up scan)
        for action in recover(data):
            err.print(f"[yellow]repaired:[/] {escape(str(action))}", highlight=False)
    except DamagedDataError as exc:
        fail(str(exc))
    try:  # the excluded folders must be known before the vault is read
        Exclusions.load(settings, data)
    except ExcludeError as exc:
        fail(str(exc))
    try:
        token, created = load_or_create_token(data)
    except DamagedTokenError as exc:
        fail(str(exc))
    if created:
        err.print(
            "[bold]Sidecar token[/] (paste it into the plugin's settings; shown once, "
            f"`vault-rag token --vault {escape(str(vault))}` shows it again):",
            highlight=False,
        )
        out.print(token, highlight=False, soft_wrap=True)
    if handshake:  # for the process that started this one (it reads our stdout), nobody else
        print_handshake(f"http://{HOST}:{bound}", token)
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    err.print(
        f"[dim]{escape(f'vault {settings.vault} · index {data}')} · http://{HOST}:{bound}[/]",
        highlight=False,
    )
    sidecar_app = create_app(settings, token=token)
    config = uvicorn.Config(
        sidecar_app,
        host=HOST,
        port=bound,
        log_level=log_level.lower(),
        timeout_graceful_shutdown=5,
        http=header_timeout_protocol(settings.server_header_timeout),
    )
    remote = None
    if remote_sock is not None:
        remote = _remote_server(settings, sidecar_app, data, remote_sock, log_level)
        err.print(f"[dim]other devices: {escape(remote.hub.url)} (paired devices only)[/]")
    install_redaction([token])  # after uvicorn.Config: it configures the loggers
    logging.getLogger("uvicorn.error").addFilter(_QuietDiskFault(sidecar_app))
    record = ServerRecord(
        url=f"http://{HOST}:{bound}",
        pid=os.getpid(),
        vault=str(settings.vault),
        version=__version__,
    )
    server = _recorded_server(config, data, record, remote)
    try:
        if remote is None:
            server.run(sockets=[sock])
        else:
            _run_both(server, sock, remote, remote_sock)
    except (IndexLockedError, ModelMismatchError, EmbeddingError) as exc:
        fail(str(exc))
    finally:
        remove_server_record(data, pid=record.pid)
    if not server.started:
        fault = disk_fault(sidecar_app.state.start_error, data)
        if fault is not None:
            fail(str(fault), code=DISK_FAULT_EXIT)
        fail("the server did not start (see the messages above)")


class _QuietDiskFault(logging.Filter):
    """uvicorn logs a failed start-up with its traceback; a disk fault is said in one line by
    `serve` instead (`storage/disk_faults.py`), so its traceback is left out."""

    def __init__(self, sidecar_app: Any) -> None:
        super().__init__()
        self.app = sidecar_app

    def filter(self, record: logging.LogRecord) -> bool:
        error = self.app.state.start_error
        if error is None or disk_fault(error) is None:
            return True
        return "Traceback" not in record.getMessage() and record.exc_info is None


def parse_listen(value: str) -> tuple[str, int]:
    """ "HOST:PORT" (IPv6 as "[::]:PORT") → (host, port), or a clear error."""
    host, sep, port = value.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        fail(f"--remote-listen wants HOST:PORT (for example 0.0.0.0:8766), not {value!r}")
    return host, int(port)


def _remote_url(host: str, port: int) -> str:
    """The address a device uses: the host given, or for a wildcard this machine's address on
    the default route (a UDP socket is only connected, nothing is sent)."""
    if host in ("0.0.0.0", "::", ""):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet leaves on connect
            host = probe.getsockname()[0]
        except OSError:
            host = "127.0.0.1"
        finally:
            probe.close()
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _remote_server(
    settings: Any, sidecar_app: Any, data: Path, sock: socket.socket, log_level: str
) -> Any:
    """The remote listener (`remote/gateway.py`): its own uvicorn server in the same process
    and event loop, forwarding in-process to `sidecar_app`. Signals are left to the loopback
    server, which stops this one first when it shuts down."""
    import uvicorn

    from vault_rag.api.header_timeout import header_timeout_protocol
    from vault_rag.remote.devices import DeviceStore
    from vault_rag.remote.gateway import create_gateway
    from vault_rag.remote.pairing import Pairing, RemoteHub

    store = DeviceStore(data)
    if store.problem is not None:
        err.print(f"[yellow]devices:[/] {escape(store.problem)}", highlight=False)
    pairing = Pairing(
        store,
        code_ttl=settings.remote_pair_code_ttl,
        attempts_per_minute=settings.remote_pair_attempts_per_minute,
    )
    host, port = sock.getsockname()[:2]
    hub = RemoteHub(store=store, pairing=pairing, url=_remote_url(host, port))
    sidecar_app.state.remote = hub
    gateway = create_gateway(store, pairing, sidecar_app, lambda: sidecar_app.state.token, settings)
    config = uvicorn.Config(
        gateway,
        log_level=log_level.lower(),
        timeout_graceful_shutdown=5,
        http=header_timeout_protocol(settings.server_header_timeout),
    )

    class RemoteServer(uvicorn.Server):
        async def serve(self, sockets: list[socket.socket] | None = None) -> None:
            await self._serve(sockets)  # no signal handlers of its own

    server = RemoteServer(config)
    server.hub = hub  # type: ignore[attr-defined]
    server.done = None  # type: ignore[attr-defined]  # its task, once running
    return server


def _run_both(server: Any, sock: socket.socket, remote: Any, remote_sock: socket.socket) -> None:
    """Both listeners in one event loop (one app state: the remote one forwards in-process)."""
    import asyncio

    from uvicorn._compat import asyncio_run

    async def both() -> None:
        remote.done = asyncio.create_task(remote.serve(sockets=[remote_sock]))
        try:
            await server.serve(sockets=[sock])
        finally:
            remote.should_exit = True
            await remote.done

    asyncio_run(both(), loop_factory=server.config.get_loop_factory())


def _recorded_server(config: Any, data: Path, record: ServerRecord, remote: Any = None) -> Any:
    """uvicorn's server, which also writes the data dir's `server.json` once it serves
    requests (after the start-up scan; `vault-rag search` asks it only when it can answer) and
    removes it when it shuts down (stopping the remote listener first, when there is one)."""
    import uvicorn

    class RecordedServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and not self.should_exit:
                write_server_record(data, record)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # First thing: no new search is sent here. (uvicorn re-raises SIGTERM/SIGINT once
            # `run` is done, so the caller's `finally` does not run after a signal.)
            remove_server_record(data, pid=record.pid)
            if remote is not None and remote.done is not None:
                remote.should_exit = True  # no device request outlives the app it forwards to
                await remote.done
            await super().shutdown(sockets=sockets)

    return RecordedServer(config)


HANDSHAKE_PREFIX = "vault-rag-handshake "


def print_handshake(url: str, token: str) -> None:
    """The handshake line: the parent process learns where the sidecar listens and its token."""
    data = {"url": url, "token": token, "version": __version__}
    sys.stdout.write(HANDSHAKE_PREFIX + json.dumps(data) + "\n")
    sys.stdout.flush()


PORT_IN_USE_EXIT = 4  # distinct from 1 (other errors) so scripts can tell


def bind_port(host: str, port: int) -> socket.socket:
    """A listening-ready socket on `host:port`, or a clear error and exit code 4."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As uvicorn does: a restart may reuse the port while old connections sit in TIME_WAIT
    # (a socket that is still listening keeps it refused).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # Listening now holds the port through the start-up index (a bound socket that does
        # not listen can be bound again by another SO_REUSEADDR socket); connections made
        # meanwhile wait in the backlog and are answered once the server is up.
        sock.listen(128)
    except OSError as exc:
        sock.close()
        fail(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}. Another program (perhaps "
            "another `vault-rag serve`) uses that port; stop it or pass `--port N` (and set the "
            "same port in the plugin's settings). Nothing was indexed.",
            code=PORT_IN_USE_EXIT,
        )
    sock.set_inheritable(True)
    return sock


@app.command()
def token(vault: VaultOption, data_dir: DataDirOption = None) -> None:
    """Print the sidecar's access token (created when there is none yet)."""
    settings = load_settings(vault=vault, data_dir=data_dir)
    data = settings.resolved_data_dir()
    try:
        value, created = load_or_create_token(data)
    except DamagedTokenError as exc:
        fail(str(exc))
        return
    if created:
        err.print(f"[dim]new token saved in {escape(str(token_path(data)))}[/]", highlight=False)
    out.print(value, highlight=False, soft_wrap=True)
