"""Server-Sent Events over any method (POST /v1/ask), with disconnect → cancellation.

The wire format is the WHATWG one a browser's `EventSource` (or a fetch-stream parser) reads:
``event: <name>`` and ``data: <one line of JSON>`` followed by a blank line. While nothing
happens, a comment line (``: ping``) every `ping_interval` seconds keeps proxies and the
client's idle timeouts from closing the stream.

The events come from an async iterator run in its own task. A second task waits for the
client's `http.disconnect`; when it comes, the task group is cancelled, which cancels the
producer where it stands (inside the answer graph, so LangGraph cancels its running nodes) and
closes the iterator. Starlette's `StreamingResponse` notices a disconnect only when a write
fails, which could be a whole model call later.

`stop` (optional) ends the stream from the server's side the same way: when the event is set,
the producer is cancelled where it stands and `stopped` is sent as the stream's last event
(a switch of embedding model that could not wait for this answer, `api/embedding_swap.py`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

log = logging.getLogger(__name__)

PING = b": ping\n\n"


def format_event(event: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    lines = [f"event: {event}", *(f"data: {line}" for line in payload.split("\n"))]
    return ("\n".join(lines) + "\n\n").encode("utf-8")


class EventStreamResponse(Response):
    media_type = "text/event-stream"

    def __init__(
        self,
        events: AsyncIterator[tuple[str, Any]],
        *,
        ping_interval: float = 15.0,
        headers: dict[str, str] | None = None,
        stop: anyio.Event | None = None,
        stopped: tuple[str, Any] | None = None,
    ) -> None:
        super().__init__(
            status_code=200,
            headers={"cache-control": "no-cache", "x-accel-buffering": "no", **(headers or {})},
            media_type=self.media_type,
        )
        # No content-length: the body streams.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.events = events
        self.ping_interval = ping_interval
        self.stop, self.stopped = stop, stopped

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        outbox, inbox = anyio.create_memory_object_stream[bytes](16)
        disconnected = False

        producing = anyio.CancelScope()

        async def produce() -> None:
            async with outbox:
                with producing:
                    async with aclosing(self.events) as events:
                        try:
                            async for name, data in events:
                                await outbox.send(format_event(name, data))
                        except Exception as exc:  # a bug in the producer: tell the client
                            log.exception("event stream failed")
                            await outbox.send(
                                format_event("error", {"code": "internal", "message": str(exc)})
                            )
                if producing.cancelled_caught and self.stopped is not None:
                    await outbox.send(format_event(*self.stopped))

        async def watch_stop(stop: anyio.Event) -> None:
            await stop.wait()
            producing.cancel()

        async def watch_disconnect() -> None:
            nonlocal disconnected
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected = True
            tasks.cancel_scope.cancel()

        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(produce)
            tasks.start_soon(watch_disconnect)
            if self.stop is not None:
                tasks.start_soon(watch_stop, self.stop)
            try:
                async with inbox:
                    while True:
                        chunk = PING
                        with anyio.move_on_after(self.ping_interval):
                            chunk = await inbox.receive()
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except anyio.EndOfStream:
                pass
            except OSError:  # the client went away mid-write
                disconnected = True
            tasks.cancel_scope.cancel()
        if not disconnected:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
