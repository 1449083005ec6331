"""`vault-rag search|ask … --remote URL --device-file FILE`: this machine as another device of
a sidecar's remote listener. Run by `entry.py` before the Typer CLI (no index, no model is
loaded here). The output is the local commands' own: `search --json` prints what
`serving.search_client.print_search_results` prints, `ask --json` the `final` event.
Any failure (revoked, unreachable, an answer that does not authenticate) is one line on stderr
and exit code 1."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from vault_rag.remote.client import RemoteClient, RemoteError
from vault_rag.serving.search_client import ordered_hit, print_search_results


def _parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"vault-rag {command} --remote")
    parser.add_argument("text", metavar="QUERY" if command == "search" else "QUESTION")
    parser.add_argument("--remote", required=True, help="the sidecar's remote listener URL")
    parser.add_argument("--device-file", required=True, type=Path, help="from `vault-rag pair`")
    parser.add_argument("--json", dest="as_json", action="store_true")
    if command == "search":
        parser.add_argument("-k", "--k", type=int, default=None)
        parser.add_argument("--folder", default=None)
        parser.add_argument("--tag", default=None)
        parser.add_argument("--collection", action="append", default=[])
    else:
        parser.add_argument("--thread", default=None)
        parser.add_argument("--collection", action="append", default=[])
    return parser


def _fail(message: str) -> int:
    sys.stderr.write(f"vault-rag: error: {message}\n")
    sys.stderr.flush()
    return 1


def run(command: str, argv: list[str]) -> int:
    args = _parser(command).parse_args(argv)
    try:
        with RemoteClient(args.device_file, url=args.remote) as client:
            if command == "search":
                return _search(client, args)
            return _ask(client, args)
    except RemoteError as exc:
        return _fail(str(exc))


def _error_of(answer: Any) -> str:
    try:
        body = answer.json()
        return f"{body.get('message') or body.get('code')} (HTTP {answer.status})"
    except ValueError:
        return f"HTTP {answer.status}"


def _search(client: RemoteClient, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"query": args.text, "k": args.k, "folder": args.folder, "tag": args.tag}
    if args.collection:
        body["collections"] = list(args.collection)
    answer = client.call("POST", "/v1/search", {k: v for k, v in body.items() if v is not None})
    if answer.status != 200:
        return _fail(f"the sidecar refused the search: {_error_of(answer)}")
    payload = answer.json()
    results = [ordered_hit(hit) for hit in payload["results"]]
    took = float(payload.get("took_ms", 0.0)) / 1000
    routing = payload.get("routing")
    print_search_results(args.text, results, took, as_json=args.as_json, routing=routing)
    return 0


def _sse_events(chunks: Any) -> Any:
    """(event, data) of a text/event-stream, from byte chunks cut anywhere."""
    buffer = ""
    for chunk in chunks:
        buffer += chunk.decode("utf-8")
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            event, data = "message", []
            for line in block.splitlines():
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "event":
                    event = value
                elif name == "data":
                    data.append(value)
            if data:
                yield event, json.loads("\n".join(data))


def _ask(client: RemoteClient, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"question": args.text}
    if args.thread:
        body["thread_id"] = args.thread
    if args.collection:
        body["collections"] = list(args.collection)
    stream = client.stream("POST", "/v1/ask", body)
    _kind, head = next(stream)
    if head.get("status") != 200:
        raw = b"".join(value for _, value in stream)
        try:
            message = json.loads(raw).get("message")
        except (ValueError, AttributeError):
            message = None
        return _fail(f"the sidecar refused the question: {message or head.get('status')}")
    final, streamed = None, False
    for event, data in _sse_events(value for _, value in stream):
        if event == "error":
            return _fail(str(data.get("message", "the answer failed")))
        if event == "delta" and not args.as_json:
            sys.stdout.write(data["text"])
            sys.stdout.flush()
            streamed = True
        elif event == "final":
            final = data
    if final is None:
        return _fail("no answer was produced")
    if args.as_json:
        sys.stdout.write(json.dumps(final, ensure_ascii=False, indent=2) + "\n")
        return 0
    if not streamed:
        sys.stdout.write(final["answer"])
    sys.stdout.write("\n")
    for c in final.get("citations", []):
        where = c.get("url") or c.get("cite") or c.get("note_path", "")
        sys.stdout.write(f"  {where}\n")
    return 0
