"""Issue 31 (also fix): a connection sending its request headers slowly stayed open (75 s seen),
each one holding a slot. `vault-rag serve` now answers 408 and closes a connection whose
headers are not complete within `server_header_timeout` (from the connection's opening, or
from a later request's first byte), while a normal request on the same server is served.
A real `vault-rag serve` and raw sockets."""

from __future__ import annotations

import socket
import time

from test_serve_faults import Serve, setup  # noqa: F401 - the fixture

TIMEOUT = 2


def trickle(port: int, seconds: float, first: bytes = b"") -> bytes:
    """Send a request's headers one line per 0.5 s for `seconds`; what the server sent back
    (b"" if it never answered and never closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds + 5) as sock:
        sock.sendall(first + b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        sock.settimeout(0.5)
        ends = time.monotonic() + seconds
        received = b""
        while time.monotonic() < ends:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
                chunk = sock.recv(4096)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                return received or b"<reset>"
            if not chunk:
                return received or b"<closed>"
            received += chunk
        return received


def test_slow_headers_are_cut_off_and_normal_requests_go_on(setup):  # noqa: F811
    env, vault, data = setup
    env = dict(env, VAULT_RAG_SERVER_HEADER_TIMEOUT=str(TIMEOUT))
    serve = Serve(env, vault, data)
    try:
        got = trickle(serve.port, seconds=5 * TIMEOUT)
        assert got.startswith(b"HTTP/1.1 408") or got in (b"<closed>", b"<reset>"), got
        # A second request on a kept-alive connection gets its own deadline too.
        with socket.create_connection(("127.0.0.1", serve.port), timeout=10) as sock:
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        # Normal requests are served throughout.
        assert serve.client.get("/v1/health").status_code == 200
    finally:
        log = serve.stop()
    assert "request headers took over" in log, log
