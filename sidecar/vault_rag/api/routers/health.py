"""`GET /v1/health`: is the sidecar up. No token needed, and nothing secret in it."""

from __future__ import annotations

from fastapi import APIRouter

from vault_rag import __version__
from vault_rag.api.schemas import Health

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health, summary="Liveness (no token needed)")
def health() -> Health:
    return Health(version=__version__)
