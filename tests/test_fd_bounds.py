"""Issue 31, defect 6: file descriptors stay bounded across bursts of concurrent searches. The
lexical index kept one SQLite connection (three files: database, -wal, -shm) per thread for
the thread's life, and the server's worker threads are new after each idle spell, so every
burst of 40 searches added ~40-80 open files until the process ran out. Real threads, real
SQLite, and a real uvicorn server whose worker threads expire between bursts."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from test_server_helpers import LiveServer
from vault_rag.index.bm25.lexical import MAX_IDLE_CONNECTIONS

BURST = 40


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def search(lexical, start: threading.Barrier) -> None:
    start.wait()  # all at once: the pool is empty for most of them
    lexical.search("蓝图 Blueprint", 5)


def test_searches_from_new_threads_do_not_keep_connections(hashed_index):
    lexical = hashed_index.lexical

    def burst() -> None:
        start = threading.Barrier(BURST)
        threads = [threading.Thread(target=search, args=(lexical, start)) for _ in range(BURST)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    burst()
    # (SQLite keeps the file of a closed connection open while others hold locks on it, and
    # reuses it for the next open: the first burst's peak stays, later bursts add nothing.)
    after_first = open_fds()
    for _ in range(3):
        burst()
    # At most the pool's idle connections (each with its -wal and -shm) beyond the first.
    assert open_fds() - after_first <= 3 * MAX_IDLE_CONNECTIONS, (after_first, open_fds())


# The module's live server (conftest `live`): the sample vault, hash embeddings, no watcher.
SERVER_SETTINGS = {"embeddings": "hash", "server_watch": False}


def test_bursts_of_concurrent_searches_keep_the_servers_files_bounded(live: LiveServer):
    def burst() -> None:
        with httpx.Client(base_url=live.url, headers=live.auth, timeout=60) as client:

            def one(i: int) -> int:
                body = {"query": f"蓝图 Blueprint {i}", "k": 5}
                return client.post("/v1/search", json=body).status_code

            with ThreadPoolExecutor(BURST) as pool:
                assert set(pool.map(one, range(BURST))) == {200}

    burst()
    after_first = open_fds()
    for _ in range(2):
        time.sleep(11)  # anyio's idle worker threads exit after 10 s: the next burst's are new
        burst()
    # The test process holds other fixtures' files too, and threads that just served a burst
    # may still be closing theirs: give it a moment to settle. A leak never settles (each
    # burst added 40-80 files that stayed open until the process ran out).
    settled = time.monotonic() + 15
    while open_fds() - after_first > 3 * MAX_IDLE_CONNECTIONS and time.monotonic() < settled:
        time.sleep(0.5)
    assert open_fds() - after_first <= 3 * MAX_IDLE_CONNECTIONS, (after_first, open_fds())
