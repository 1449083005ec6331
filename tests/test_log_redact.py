"""Issue 31 (also fix): the log redaction garbled every message holding a `?` ("what is
BeginPlay?" became "BeginPlay?[redacted]"). Query strings are still blanked, in access-log
paths and in free text; plain question marks are left alone. Real `logging` handlers."""

from __future__ import annotations

import io
import logging

import pytest

from vault_rag.api.log_redact import REDACTED, RedactFilter


@pytest.fixture
def logged():
    """Log through a real handler carrying the filter; returns a function giving the output."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactFilter(["s3cret-token"]))
    loggers = [logging.getLogger(n) for n in ("vault_rag.test_redact", "uvicorn.access")]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    yield stream.getvalue
    for logger in loggers:
        logger.removeHandler(handler)


def test_question_marks_in_messages_are_kept(logged):
    log = logging.getLogger("vault_rag.test_redact")
    log.info("asked: %s", "What is BeginPlay? And Tick?")
    log.info("GC 为什么会回收我的对象？ok? yes")
    out = logged()
    assert "What is BeginPlay? And Tick?" in out
    assert "ok? yes" in out
    assert REDACTED not in out


def test_query_strings_in_text_are_blanked(logged):
    logging.getLogger("vault_rag.test_redact").info(
        "fetching http://127.0.0.1:8765/v1/x?token=abc&wait=true now"
    )
    out = logged()
    assert "?token=[redacted]&wait=[redacted] now" in out
    assert "abc" not in out


def test_access_log_path_is_blanked_whatever_its_form(logged):
    access = logging.getLogger("uvicorn.access")
    access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/v1/health?abc", "1.1", 200)
    access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/v1/x?k=v&t=1", "1.1", 200)
    out = logged()
    assert "GET /v1/health?[redacted] HTTP/1.1" in out
    assert "GET /v1/x?k=[redacted]&t=[redacted] HTTP/1.1" in out


def test_the_token_is_blanked_anywhere(logged):
    logging.getLogger("vault_rag.test_redact").info("bearer %s?", "s3cret-token")
    out = logged()
    assert "s3cret-token" not in out
    assert f"bearer {REDACTED}?" in out
