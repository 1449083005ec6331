"""`vault-rag search` through a running sidecar, and the search command's output.

When `vault-rag serve` runs on the same data dir (its record, `serving/server_info.py`), the search
is a `POST /v1/search` to it with the data dir's token: no index to open, no model to load. This
module imports only the standard library, platformdirs and (to print a table) rich, so the
`vault-rag` entry point (`entry.py`) can run it before the CLI and its stages are imported. Anything
it cannot do exactly as the in-process search would (`--per-note`, `--explain`, `-k` above the API's
100, no record, a stale record, a refused token, an error) returns None, and the caller searches
in-process.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_rag.serving.server_info import process_alive, read_server_record
from vault_rag.serving.server_token import token_path
from vault_rag.storage.locations import quick_data_dir

# The order of `retrieval.hybrid.SearchResult`'s fields, so `--json` prints the same text both
# ways (tests/test_search_client.py checks it); fields the server adds later go after them.
RESULT_FIELDS = (
    "note_path",
    "heading_path",
    "anchor",
    "chunk_id",
    "score",
    "text",
    "origin",
    "line_start",
    "line_end",
    "embedded_in",
    "dense_score",
    "lexical_score",
    "base_score",
    "prior",
    "promoted",
    "context",
    "context_line_start",
    "context_line_end",
    "kind",
    "page",
    "page_end",
    "rerank_score",
    "rerank_fallback",
    "collection",
    "symbol",
    "related_file",
    "declared_at",
    "url",
    "page_title",
    "graph_reason",  # printed only when set (`SearchResult.to_dict`): other results as before
    "linked",  # printed only when not empty (`SearchResult.to_dict`), the same
)
API_MAX_K = 100  # SearchRequest.k's bound
HEALTH_TIMEOUT = 2.0  # a live sidecar answers /v1/health in milliseconds
SEARCH_TIMEOUT = 120.0  # a search may wait behind the indexer's model batch on a busy machine


@dataclass(frozen=True)
class SearchArgs:
    query: str
    vault: Path  # resolved
    data_dir: Path | None = None  # --data-dir (resolved), None: from the settings
    k: int | None = None
    folder: str | None = None
    tag: str | None = None
    per_note: int | None = None
    as_json: bool = False
    explain: bool = False
    in_process: bool = False  # --in-process: never ask a sidecar
    collections: tuple[str, ...] = ()  # --collection: "vault" or source names; none: the default


def _opener() -> Any:
    import urllib.request  # here: the in-process search (no sidecar) does not pay for it

    # No proxy, whatever the environment says: the token must only ever go to 127.0.0.1.
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _note(message: str) -> None:
    sys.stderr.write(f"vault-rag: {message}; searching in this process instead\n")
    sys.stderr.flush()


def running_sidecar(vault: Path, data_dir: Path | None) -> tuple[str, str, Path] | None:
    """(url, token, data dir) of the sidecar serving `vault` (resolved) on this machine, when
    its record is current and it answers `/v1/health`; None otherwise (`vault-rag search`
    and `vault-rag mcp` then work in their own process)."""
    data = quick_data_dir(vault, data_dir)
    if data is None:
        return None
    record = read_server_record(data)
    if record is None or record.vault != str(vault) or not process_alive(record.pid):
        return None
    if not record.url.startswith("http://127.0.0.1:"):
        return None  # the sidecar serves this machine only; never send the token elsewhere
    try:  # a stale record whose port another program took, or a server not up yet
        with _opener().open(f"{record.url}/v1/health", timeout=HEALTH_TIMEOUT) as response:
            health = json.loads(response.read())
        if not isinstance(health, dict) or health.get("status") != "ok":
            return None
    except (OSError, ValueError):
        return None
    try:
        token = token_path(data).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return record.url, token, data


def search_running_server(args: SearchArgs) -> int | None:
    """Search through the sidecar running on this vault's data dir and print the results as
    the in-process search does; return 0. None: no usable sidecar (nothing printed on stdout;
    a note on stderr when one answered but refused)."""
    if args.in_process or args.per_note is not None or args.explain:
        return None
    if args.k is not None and args.k > API_MAX_K:
        return None  # the API has no per-note cap, no prior switch to explain, k <= 100
    found = running_sidecar(args.vault, args.data_dir)
    if found is None:
        return None
    url, token, data = found
    opener = _opener()
    import urllib.error
    import urllib.request

    body: dict[str, Any] = {
        "query": args.query,
        "k": args.k,
        "folder": args.folder,
        "tag": args.tag,
    }
    if args.collections:
        body["collections"] = list(args.collections)
    request = urllib.request.Request(
        f"{url}/v1/search",
        data=json.dumps({key: v for key, v in body.items() if v is not None}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with opener.open(request, timeout=SEARCH_TIMEOUT) as response:
            payload = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            _note(
                f"the sidecar at {url} refused the token in {token_path(data)} "
                "(401: it was started with another token)"
            )
        else:
            _note(f"the sidecar at {url} answered HTTP {exc.code}")
        return None
    except (OSError, ValueError) as exc:  # timeouts and resets are OSErrors
        _note(f"the sidecar at {url} did not answer the search ({exc})")
        return None
    try:
        results = [ordered_hit(hit) for hit in payload["results"]]
        took_ms = float(payload.get("took_ms", 0.0))
    except (KeyError, TypeError, ValueError, AttributeError):
        _note(f"the sidecar at {url} sent a search answer this version cannot read")
        return None
    routing = payload.get("routing")
    print_search_results(args.query, results, took_ms / 1000, as_json=args.as_json, routing=routing)
    return 0


def ordered_hit(hit: dict[str, Any]) -> dict[str, Any]:
    """A /v1/search hit in the in-process search's field order and shape (remote prints alike)."""
    ordered = {key: hit[key] for key in RESULT_FIELDS if key in hit}
    ordered.update((key, value) for key, value in hit.items() if key not in ordered)
    if ordered.get("graph_reason", "") is None:  # as the in-process search prints it
        del ordered["graph_reason"]
    if ordered.get("linked") == []:  # the same for the note ↔ code links
        del ordered["linked"]
    return ordered


def linked_lines(hit: dict[str, Any]) -> list[str]:
    """The hit's note ↔ code links as `vault-rag search` prints them under it (none: [])."""
    lines = []
    for unit in hit.get("linked") or []:
        if unit.get("kind") == "code":
            lines.append(
                f"↔ code: {unit['note_path']}:{unit['line_start']}-{unit['line_end']} "
                f"{unit.get('symbol') or ''}".rstrip()
            )
        else:
            lines.append(f"↔ note: {unit['note_path']}")
    return lines


def print_search_results(
    query: str,
    results: list[dict[str, Any]],
    elapsed: float,
    *,
    as_json: bool = False,
    explain: bool = False,
    prior_off: bool = False,
    console: Any = None,
    routing: dict[str, Any] | None = None,
) -> None:
    """What `vault-rag search` prints: the JSON document, or a table (rich). `routing`: the
    decision of a search over several collections (in the JSON; with `explain`, one line)."""
    if as_json:
        payload: dict[str, Any] = {"query": query, "results": results}
        if routing:
            payload["routing"] = routing
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = console or Console()
    table = Table(title=f"{len(results)} results in {elapsed * 1000:.0f} ms")
    explained = ("base", "prior", "rerank") if explain else ()
    for column in ("#", "score", *explained, "note", "heading", "lines"):
        table.add_column(column)
    for i, r in enumerate(results, 1):
        note = r["note_path"] + (f" (from {r['origin']})" if r["origin"] != r["note_path"] else "")
        if r.get("collection", "vault") != "vault":
            note = f"{r['collection']}: {note}"
        note += " (promoted)" if r.get("promoted") else ""
        note += "".join(f"\n{line}" for line in linked_lines(r))
        # score = base × prior; prior ×1.000 means no feedback (or the prior is off)
        rerank = r.get("rerank_score")
        extra = (
            (
                f"{r.get('base_score') or 0.0:.4f}",
                f"×{r['prior']:.3f}",
                "–" if rerank is None else f"{rerank:.4f}",
            )
            if explain
            else ()
        )
        table.add_row(
            str(i),
            f"{r['score']:.4f}",
            *extra,
            Text(note),  # paths and headings are text, never Rich markup (`[Secret]/…`)
            Text(r["heading_path"]),
            f"{r['line_start']}-{r['line_end']}",
        )
    out.print(table)
    if explain and routing:
        from vault_rag.retrieval.routing import routing_line

        out.print(Text(routing_line(routing)))
    if explain:  # the graph route's hits say why they were added
        for i, r in enumerate(results, 1):
            if r.get("graph_reason"):
                out.print(Text(f"#{i} {r['graph_reason']}"))
    if explain and prior_off:
        out.print("the feedback prior is off (feedback_prior = false): score = base")
    fallback = results[0].get("rerank_fallback") if results else None
    if fallback:
        out.print(f"re-ranker not used ({fallback}): results are in the fused order")
    elif explain and results and all(r.get("rerank_score") is None for r in results):
        out.print("no re-ranker (rerank = none): order = score")
