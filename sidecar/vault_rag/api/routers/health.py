"""`GET /v1/health`: is the sidecar up. No token needed, and nothing secret in it.

With `?challenge=…` (a fresh random string from the client) the answer carries `proof`, the
HMAC of the challenge keyed by the server's token (`server_token.token_proof`): a client that
knows the token (from `vault-rag token`) checks that the server on the port is the vault's own
sidecar before it sends the token to it. Anything else answering on the port cannot prove it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from vault_rag import __version__
from vault_rag.api.schemas import Health
from vault_rag.serving.server_token import token_proof

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health, summary="Liveness (no token needed)")
def health(
    request: Request,
    challenge: Annotated[
        str | None,
        Query(
            min_length=16,
            max_length=256,
            description="A fresh random string: the answer's `proof` is its HMAC by the token",
        ),
    ] = None,
) -> Health:
    proof = token_proof(request.app.state.token, challenge) if challenge else None
    return Health(version=__version__, proof=proof)
