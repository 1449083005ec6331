"""`Retry-After` on the sidecar's busy answers (409 and 503): when to ask again, from what the
server knows, so a client can say "ready in about N s" and retry then instead of guessing.

One place decides it for every route (the error handlers call `retry_after`), by the answer's
stable `code`:
- `switch_running`: the embedding-model rebuild's own estimate (units left at its measured
  rate), else a short poll;
- `switching` (the new index is being opened) and `starting`: a few seconds — opening takes
  that long, and the start-up scan runs after the server already answers;
- `store_unavailable`: the vector store's circuit breaker fails fast this long after a failed
  connection (`index/stores/base.Breaker`);
- `embedding_unavailable`: a model server that is down or still loading: when the writer,
  backing off after a failed call, calls it again (`IndexWriter.backoff_left`), else a poll.
Answers that waiting does not mend (`index_damaged`, `store_unsupported`) get none.
"""

from __future__ import annotations

import math
from typing import Any

# No lower cap than a day: a rebuild of a large vault can take an hour, and the header is also
# what the plugin tells the user ("ready in about N min"); clients cap their own wait.
MIN_SECONDS, MAX_SECONDS = 1, 86_400
POLL_SECONDS = {
    "starting": 3,
    "switching": 3,
    "switch_running": 10,
    "store_unavailable": 5,
    "embedding_unavailable": 10,
}


def retry_after(app_state: Any, status: int, code: str) -> int | None:
    """Seconds until the request is worth repeating; None: no `Retry-After` for this answer."""
    if status not in (409, 503) or code not in POLL_SECONDS:
        return None
    seconds: int | None = None
    if code == "switch_running":
        rebuild = getattr(app_state, "embedding_rebuild", None)
        status_now = getattr(rebuild, "status", None)
        seconds = status_now.eta_seconds() if status_now is not None else None
    elif code == "embedding_unavailable":
        writer = getattr(getattr(app_state, "server", None), "writer", None)
        left = writer.backoff_left() if writer is not None else 0.0
        seconds = math.ceil(left) if left > 0 else None
    if seconds is None:
        seconds = POLL_SECONDS[code]
    return max(MIN_SECONDS, min(MAX_SECONDS, int(seconds)))


def with_retry_after(
    app_state: Any, status: int, code: str, headers: dict[str, str] | None
) -> dict[str, str] | None:
    """`headers` plus `Retry-After` when `retry_after` gives one (a route's own value wins)."""
    seconds = retry_after(app_state, status, code)
    if seconds is None or (headers and any(k.lower() == "retry-after" for k in headers)):
        return headers
    return {**(headers or {}), "Retry-After": str(seconds)}
