"""A request's headers must arrive within `server_header_timeout` seconds. uvicorn times out
idle keep-alive connections but not a request whose headers trickle in a byte at a time (75 s
was seen, and each such connection holds a slot): this protocol closes the connection with 408
when the headers of a request are not complete in time, counted from the connection's opening
(first request) or from the request's first byte (later requests on a kept-alive connection).
The body has its own limit (`server_body_timeout`, api/middleware.py)."""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)
_MESSAGE = b"request headers took too long"
TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_MESSAGE), _MESSAGE)
)


def header_timeout_protocol(seconds: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with the header deadline (pass it as `Config(http=...)`)."""

    class HeaderTimeoutProtocol(HttpToolsProtocol):
        _headers_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._headers_deadline is None:
                self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._headers_deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._headers_deadline is not None:
                self._headers_deadline.cancel()
                self._headers_deadline = None

        def _too_slow(self) -> None:
            self._headers_deadline = None
            if self.transport.is_closing():
                return
            log.info("closed a connection whose request headers took over %.0f s", seconds)
            self.transport.write(TIMEOUT_RESPONSE)
            self.transport.close()

    return HeaderTimeoutProtocol
