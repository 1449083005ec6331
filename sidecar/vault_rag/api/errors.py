"""One error shape for every failure: `{"code", "message", "detail"}`."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from vault_rag.api.retry_after import with_retry_after
from vault_rag.embeddings.base import EmbeddingError
from vault_rag.maintenance.doctor import damaged_database, note_damage_seen

log = logging.getLogger(__name__)

DEFAULT_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    503: "unavailable",
}


class ApiError(HTTPException):
    """An HTTP error with a stable `code`."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        detail: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status_code, message, headers)
        self.code = code
        self.extra = detail


def error_response(
    status: int, code: str, message: str, detail: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"code": code, "message": message, "detail": jsonable_encoder(detail)}
    return JSONResponse(body, status_code=status, headers=headers)


def describe_validation(errors: list[dict[str, Any]]) -> tuple[str, str]:
    """(code, message) for pydantic/FastAPI validation errors, naming the fields."""
    for e in errors:
        if e.get("type") == "json_invalid":
            reason = (e.get("ctx") or {}).get("error", "JSON decode error")
            position = e["loc"][-1] if len(e.get("loc", ())) > 1 else None
            where = f" (at character {position})" if isinstance(position, int) else ""
            return "invalid_json", f"the request body is not valid JSON: {reason}{where}"
    parts = []
    for e in errors[:5]:
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        parts.append(f"{loc}: {e.get('msg')}" if loc else str(e.get("msg")))
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "invalid_request", "; ".join(parts) + more


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = getattr(exc, "code", None) or DEFAULT_CODES.get(exc.status_code, "error")
        headers = with_retry_after(request.app.state, exc.status_code, code, exc.headers)
        return error_response(
            exc.status_code, code, str(exc.detail), getattr(exc, "extra", None), headers
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Echoing `input` back could return a whole posted note: leave it out.
        errors = [{k: v for k, v in e.items() if k not in ("input", "url")} for e in exc.errors()]
        code, message = describe_validation(errors)
        return error_response(422, code, message, errors)

    @app.exception_handler(EmbeddingError)
    async def embedding_error(request: Request, exc: EmbeddingError) -> JSONResponse:
        headers = with_retry_after(request.app.state, 503, "embedding_unavailable", None)
        return error_response(503, "embedding_unavailable", str(exc), headers=headers)

    @app.exception_handler(sqlite3.DatabaseError)
    async def database_error(request: Request, exc: sqlite3.DatabaseError) -> JSONResponse:
        # A page damaged in the middle of a database passes the open-time check and fails
        # the first query that reads it: say what it is and what repairs it, not "internal".
        if damaged_database(exc) is not None:
            log.error("damaged database on %s %s: %s", request.method, request.url.path, exc)
            server = getattr(request.app.state, "server", None)
            if server is not None:  # the next start runs the full check and repairs it
                note_damage_seen(server.index.data_dir, str(exc))
            return error_response(
                503,
                "index_damaged",
                f"a database of the index is damaged ({exc}); stop the sidecar and run "
                "`vault-rag doctor --repair`, or restart it: the next start repairs it",
            )
        return await internal_error(request, exc)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", f"internal error: {type(exc).__name__}: {exc}")
