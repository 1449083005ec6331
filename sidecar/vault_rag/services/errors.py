"""The one error the services raise: a stable `code`, a message for people, the HTTP status
the API answers with, and details (`detail`) a client may read."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """A request the vault cannot answer as asked (unknown note, unsafe path, bad input)."""

    def __init__(self, status: int, code: str, message: str, detail: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.detail = detail


def not_found(path: str) -> ServiceError:
    return ServiceError(404, "not_found", f"no note {path!r} in the vault", {"path": path})


def bad_input(message: str, **detail: Any) -> ServiceError:
    return ServiceError(422, "invalid_request", message, detail or None)
