"""The sidecar's HTTP API (`vault-rag serve`): FastAPI on uvicorn, bound to 127.0.0.1."""

from vault_rag.api.app import HOST, create_app

__all__ = ["HOST", "create_app"]
