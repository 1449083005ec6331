"""`vault-rag mcp`: the MCP server over stdio, for an agent that starts it as a subprocess.

It uses the sidecar running on the vault when there is one (`remote.RemoteBackend`: found as
`vault-rag search` finds it), and the index in this process when there is none (opened on the
first call, read-only, as `vault-rag search` opens it). A sidecar that stops answering
mid-session is replaced by the in-process index for the rest of it. Start-up imports neither
the index nor a model, so `tools/list` answers at once (`benchmarks/mcp_start.py` measures it).

stdout carries the protocol only: every message of ours goes to stderr.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from vault_rag.mcp_server import models as m

if TYPE_CHECKING:
    from vault_rag.mcp_server.local import LocalBackend
    from vault_rag.mcp_server.remote import RemoteBackend
from vault_rag.mcp_server.limits import Limits
from vault_rag.settings import Settings


def _say(message: str) -> None:
    sys.stderr.write(f"vault-rag mcp: {message}\n")
    sys.stderr.flush()


@dataclass
class LocalVault:
    """`services.VaultParts` for this process: the index opened as `vault-rag search` opens it."""

    settings: Settings
    index: Any
    exclusions: Any
    prior: Any
    resources: Any = None  # graph.config.Resources, built for the first ask
    # The sources beside the vault (`sources/service.ServedSources`): searched from what their
    # indexes hold (this process indexes nothing: `vault-rag index` or the sidecar does).
    sources: Any = None

    @classmethod
    def open(cls, settings: Settings) -> LocalVault:
        from vault_rag.feedback.prior import open_prior
        from vault_rag.serving.context import open_index
        from vault_rag.vault.exclusions import Exclusions

        index = open_index(settings, search_only=True)
        try:
            index.check_model()
            prior = open_prior(settings.model_copy(update={"data_dir": index.data_dir}))
            exclusions = Exclusions.load(settings, index.data_dir)
        except BaseException:
            index.close()
            raise
        from vault_rag.source_indexes.service import ServedSources

        return cls(settings, index, exclusions, prior, sources=ServedSources(settings, index))

    def close(self) -> None:
        if self.sources is not None:
            self.sources.close()
        if self.prior is not None:
            self.prior.close()
        self.index.close()


class StdioBackend:
    """The sidecar when one runs (decided as the server starts), else this process's index."""

    def __init__(self, settings: Settings, limits: Limits) -> None:
        self.settings = settings
        self.remote: RemoteBackend | None = None
        self._vault: LocalVault | None = None
        self.limits = limits
        self._lock = threading.Lock()
        self._local: LocalBackend | None = None

    @property
    def local(self) -> LocalBackend:
        """The in-process tools, imported on first use (start-up stays light)."""
        from vault_rag.mcp_server.local import LocalBackend

        if self._local is None:
            self._local = LocalBackend(self._parts, self._resources, self.limits)
        return self._local

    @asynccontextmanager
    async def lifespan(self, _server: Any) -> AsyncIterator[None]:
        from vault_rag.serving.search_client import running_sidecar

        async with AsyncExitStack() as stack:
            vault = self.settings.vault
            assert vault is not None
            found = running_sidecar(vault, self.settings.data_dir)
            if found is not None:
                from vault_rag.mcp_server.remote import RemoteBackend

                remote = RemoteBackend(found[0], found[1])
                try:
                    await remote.open(stack)
                    self.remote = remote
                    _say(f"serving through the sidecar at {found[0]}")
                except Exception as exc:  # any failure: serve in-process
                    _say(f"the sidecar at {found[0]} refused ({exc}); using the index here")
            if self.remote is None:
                _say("no sidecar runs on this vault: serving the index in this process")
            try:
                yield
            finally:
                if self._vault is not None:
                    self._vault.close()

    # -- in-process parts, opened once on first use ----------------------------------------------
    def _parts(self) -> LocalVault:
        with self._lock:
            if self._vault is None:
                self._vault = LocalVault.open(self.settings)
            return self._vault

    def _resources(self) -> Any:
        from vault_rag.graph.config import Resources

        vault = self._parts()
        with self._lock:
            if vault.resources is None:
                vault.resources = Resources.from_settings(
                    self.settings, index=vault.index, prior=vault.prior
                )
                vault.resources.sources = vault.sources
            return vault.resources

    def _lost(self, exc: BaseException) -> None:
        _say(f"the sidecar stopped answering ({type(exc).__name__}: {exc}); using the index here")
        self.remote = None

    # -- the backend ------------------------------------------------------------------------------
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        if self.remote is not None:
            try:
                return await self.remote.call_tool(name, arguments)
            except MCPError:
                raise
            except Exception as exc:  # a transport failure
                self._lost(exc)
        return await self.local.call_tool(name, arguments)

    async def list_note_page(self, cursor: str | None) -> tuple[list[m.NoteListEntry], str | None]:
        if self.remote is not None:
            try:
                return await self.remote.list_note_page(cursor)
            except MCPError:
                raise
            except Exception as exc:  # a transport failure
                self._lost(exc)
        return await self.local.list_note_page(cursor)

    async def read_note_resource(self, path: str) -> str:
        if self.remote is not None:
            try:
                return await self.remote.read_note_resource(path)
            except MCPError:
                raise
            except Exception as exc:  # a transport failure
                self._lost(exc)
        return await self.local.read_note_resource(path)


def run_stdio(vault: Path, data_dir: Path | None = None) -> None:
    """Serve the vault's MCP server on stdin/stdout until the client closes it."""
    from vault_rag.mcp_server.server import build_server
    from vault_rag.settings import load_settings
    from vault_rag.storage.private_files import private_umask

    private_umask()  # the data dir holds note text (as every CLI command)
    settings = load_settings(vault=vault, data_dir=data_dir)
    limits = Limits.from_settings(settings)
    backend = StdioBackend(settings, limits)
    server = build_server(backend, limits, lifespan=backend.lifespan)
    server.run("stdio")
