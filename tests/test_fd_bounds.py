"""Issue 31, defect 6: file descriptors stay bounded across bursts of concurrent searches. The
lexical index kept one SQLite connection (three files: database, -wal, -shm) per thread for
the thread's life, and the server's worker threads are new after each idle spell, so every
burst of 40 searches added ~40-80 open files until the process ran out. Real threads, real
SQLite, and a real uvicorn server whose worker threads expire between bursts.

Issue 40: the count is of the lexical index's own files only (`/proc/self/fd` links to its
database, -wal and -shm), never the whole process's: under load other fixtures' threads are
still opening and closing files, which moved a process-wide count by tens (82 → 100). The
bound is what the pool can hold open at once, whatever the machine's load: a database and a
-wal file per connection that can exist together (each thread of a burst, plus the idle pool),
and one shared -shm. (SQLite keeps a closed connection's file open while others hold locks on
the same file, and reuses it for the next open: how many stay depends on how many searches
overlapped, which load changes. So they are bounded, and released when the pool closes.)"""

from __future__ import annotations

import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from test_server_helpers import LiveServer
from vault_rag.index.bm25.lexical import DB_FILE, MAX_IDLE_CONNECTIONS, LexicalIndex

BURST = 40
# Files open at once at most: a database and a -wal per connection (every thread of a burst,
# the idle pool's, and one more user such as the server's writer), and the one -shm. A leak of
# one connection per search passes it within the first bursts (40-80 files each).
MOST_FILES = 2 * (BURST + MAX_IDLE_CONNECTIONS + 1) + 1


def lexical_fds(directory: Path) -> int:
    """Open descriptors of this process on the lexical database under `directory`."""
    prefix = str(directory / DB_FILE)
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since listdir (another thread): not ours to count
            continue
        if target.startswith(prefix):
            count += 1
    return count


def search(lexical, start: threading.Barrier) -> None:
    start.wait()  # all at once: the pool is empty for most of them
    lexical.search("蓝图 Blueprint", 5)


def test_searches_from_new_threads_do_not_keep_connections(hashed_index, tmp_path: Path):
    # A lexical index of its own (a copy of the module's), so closing it ends this test only.
    directory = tmp_path / "lexical"
    shutil.copytree(hashed_index.lexical.data_dir, directory)
    lexical = LexicalIndex(directory)

    def burst() -> None:
        start = threading.Barrier(BURST)
        threads = [threading.Thread(target=search, args=(lexical, start)) for _ in range(BURST)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    counts = []
    for _ in range(5):
        burst()
        counts.append(lexical_fds(directory))
    # Five bursts of new threads: a connection kept per thread would be 200+ connections.
    assert max(counts) <= MOST_FILES, counts
    # Every thread is gone: closing the pool's idle connections releases every file, the ones
    # SQLite held for reuse included. A connection a dead thread still held would keep its own.
    lexical.close()
    assert lexical_fds(directory) == 0, counts


# The module's live server (conftest `live`): the sample vault, hash embeddings, no watcher.
SERVER_SETTINGS = {"embeddings": "hash", "server_watch": False}


def test_bursts_of_concurrent_searches_keep_the_servers_files_bounded(live: LiveServer):
    directory = live.app.state.server.index.lexical.data_dir

    def burst() -> None:
        with httpx.Client(base_url=live.url, headers=live.auth, timeout=60) as client:

            def one(i: int) -> int:
                body = {"query": f"蓝图 Blueprint {i}", "k": 5}
                return client.post("/v1/search", json=body).status_code

            with ThreadPoolExecutor(BURST) as pool:
                assert set(pool.map(one, range(BURST))) == {200}

    counts = []
    for i in range(4):
        if i:
            time.sleep(11)  # anyio's idle worker threads exit after 10 s: the next burst's are new
        burst()
        counts.append(lexical_fds(directory))
    # Four bursts, each on new worker threads: a connection kept per thread would be 160+
    # connections, over 300 files; the pool stays within what it can hold at once.
    assert max(counts) <= MOST_FILES, counts
