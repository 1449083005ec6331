"""No secret reaches a log: uvicorn's access log prints each request's path *with* its query
string, so a token a client puts in a URL (`?token=…`) would be written to the terminal or a
log file. This filter, on every handler the server logs through, blanks the values of query
strings in access-log lines and the server's own token wherever it appears in any record."""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qsl, urlencode

REDACTED = "[redacted]"
# In free text only a `?` that starts a `key=value` query is one: a question mark in a message
# ("what is BeginPlay? …") is left alone (it used to become "?[redacted]").
_QUERY_IN_TEXT = re.compile(r"\?([A-Za-z_][\w.-]*=[^\s\"']*)")
_QUERY_IN_PATH = re.compile(r"\?([^\s\"']*)")
_ACCESS_PATH_ARG = 2  # uvicorn.access: (client, method, full path, http version, status)


def _blank(match: re.Match[str]) -> str:
    pairs = parse_qsl(match.group(1), keep_blank_values=True)
    if not pairs or "=" not in match.group(1):  # `?abc`: the whole query may be a secret
        return "?" + REDACTED
    return "?" + urlencode([(k, REDACTED) for k, _ in pairs], safe="[]")


def redact_query(path: str) -> str:
    """`/v1/x?token=abc&wait=true` → `/v1/x?token=[redacted]&wait=[redacted]` (a request path:
    whatever follows its `?` is a query, `?abc` included)."""
    return _QUERY_IN_PATH.sub(_blank, path)


def redact_text(text: str) -> str:
    """The query strings inside free text (`… GET /v1/x?token=abc …`), nothing else."""
    return _QUERY_IN_TEXT.sub(_blank, text) if "?" in text else text


class RedactFilter(logging.Filter):
    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def _clean(self, value: object) -> object:
        if not isinstance(value, str):
            return value
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        return redact_text(value)

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = self._clean(record.msg)
        if isinstance(record.args, tuple):
            args = [self._clean(a) for a in record.args]
            path = args[_ACCESS_PATH_ARG] if len(args) > _ACCESS_PATH_ARG else None
            if record.name == "uvicorn.access" and isinstance(path, str):
                args[_ACCESS_PATH_ARG] = redact_query(path)
            record.args = tuple(args)
        elif isinstance(record.args, dict):
            record.args = {k: self._clean(v) for k, v in record.args.items()}
        return True


def install_redaction(secrets: list[str]) -> None:
    """Put the filter on every handler of the root and uvicorn loggers (call it after uvicorn
    has configured its logging: `uvicorn.Config(...)` does that)."""
    redactor = RedactFilter(secrets)
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RedactFilter) for f in handler.filters):
                handler.addFilter(redactor)
