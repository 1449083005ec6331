"""The sidecar's access token: random, created on first start, kept in the data dir (mode 0600).

Every API route but `/v1/health` wants `Authorization: Bearer <token>`; the plugin stores the
token in its settings. `vault-rag serve` shows it once, when it is created, and
`vault-rag token` shows it again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from vault_rag.storage.private_files import private_dir

TOKEN_FILE = "server-token"


def token_path(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


def load_or_create_token(data_dir: Path) -> tuple[str, bool]:
    """(token, created now). An existing file readable by others is tightened to 0600."""
    path = token_path(data_dir)
    private_dir(data_dir)
    if path.exists():
        return read_token(path), False
    token = secrets.token_urlsafe(32)
    # Written whole to a file of its own, then linked into place: a full disk or a crash
    # leaves no token file rather than an empty one, and two servers starting at once cannot
    # both create (and show) a token (`link` fails when the name exists).
    temp = path.with_name(f"{TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(token + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temp, path)
    except FileExistsError:
        return read_token(path), False
    finally:
        temp.unlink(missing_ok=True)
    return token, True


def read_token(path: Path) -> str:
    if os.name == "posix" and stat.S_IMODE(path.stat().st_mode) & 0o077:
        path.chmod(0o600)
    try:
        token = path.read_text(encoding="ascii").strip()
    except UnicodeDecodeError:
        token = ""
    if len(token) < 16 or not token.isprintable():
        raise DamagedTokenError(
            f"the token file {path} is empty or damaged; delete it to get a new one (then "
            "paste the new token into the plugin's settings)"
        )
    return token


class DamagedTokenError(ValueError):
    """The token file holds no token (written by a version that could leave it empty)."""


PROOF_CONTEXT = "vault-rag/health/v1\n"  # keeps a proof from being reusable as another MAC


def token_proof(token: str, challenge: str) -> str:
    """Proof that the server holds `token`, without sending it: hex HMAC-SHA256 keyed by the
    token over the context and the client's fresh `challenge`. The plugin checks it before it
    sends the token to whatever answers on the port (a squatter cannot compute it)."""
    message = (PROOF_CONTEXT + challenge).encode("utf-8")
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()
