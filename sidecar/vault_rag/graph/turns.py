"""One turn at a time per conversation thread.

Two questions asked on the same thread at once would both start from the same checkpoint, and
the second to finish would overwrite the first one's turn (the thread would end up with 4
messages instead of 6). Turns on one thread are therefore queued: the second waits until the
first has finished (or failed, or was cancelled) and then starts from the conversation that
includes it. Different threads never wait for each other.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ThreadTurns:
    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._holders: dict[str, int] = {}  # running + waiting turns, to drop idle locks

    def busy(self, thread_id: str) -> bool:
        """A turn is running on `thread_id` (a new one would wait)."""
        lock = self._locks.get(thread_id)
        return lock is not None and lock.locked()

    @asynccontextmanager
    async def turn(self, thread_id: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(thread_id, asyncio.Lock())
        self._holders[thread_id] = self._holders.get(thread_id, 0) + 1
        try:
            async with lock:  # cancelled while waiting (client gone): simply leaves the queue
                yield
        finally:
            self._holders[thread_id] -= 1
            if not self._holders[thread_id]:
                del self._holders[thread_id]
                del self._locks[thread_id]
