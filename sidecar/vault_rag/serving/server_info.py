"""The running sidecar's record in its data dir (`server.json`): where it listens, so
`vault-rag search` can ask it instead of loading the index and the model itself.

`vault-rag serve` writes it (atomically, mode 0600) once the server answers requests and
removes it when it stops. A server that was killed leaves it behind: a reader treats a record
as stale when its process is gone or its port does not answer `/v1/health` as a Vault RAG
sidecar, and the next `serve` replaces it. Standard library only (it is read on the fast path).
The token is not in it: it stays in `server-token` (`serving/server_token.py`).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

SERVER_FILE = "server.json"


@dataclass(frozen=True)
class ServerRecord:
    url: str  # http://127.0.0.1:PORT
    pid: int
    vault: str  # the vault it serves (resolved path)
    version: str


def server_record_path(data_dir: Path) -> Path:
    return data_dir / SERVER_FILE


def write_server_record(data_dir: Path, record: ServerRecord) -> Path:
    """Replace the record atomically (write a private temp file, then rename over it)."""
    path = server_record_path(data_dir)
    temp = path.with_name(f".{SERVER_FILE}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(record), handle)
        handle.write("\n")
    os.replace(temp, path)
    return path


def remove_server_record(data_dir: Path, pid: int | None = None) -> None:
    """Remove the record, only when it is this process's (`pid`): a newer server on the same
    data dir may have replaced it."""
    path = server_record_path(data_dir)
    record = read_server_record(data_dir)
    if record is not None and pid is not None and record.pid != pid:
        return
    path.unlink(missing_ok=True)


def read_server_record(data_dir: Path) -> ServerRecord | None:
    """The record, or None when there is none or it cannot be read."""
    try:
        data = json.loads(server_record_path(data_dir).read_text(encoding="utf-8"))
        return ServerRecord(
            url=str(data["url"]),
            pid=int(data["pid"]),
            vault=str(data["vault"]),
            version=str(data.get("version", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if os.name != "posix":  # os.kill would end the process there; /v1/health decides
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    except OSError:
        return False
    return True
