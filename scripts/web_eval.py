"""Serve an installed HTML manual on 127.0.0.1, add it as a web source beside a vault, and run
`vault-rag eval` on a question set over it: the collection alone and merged with the vault
(issue 42; docs/retrieval.md, "Web documentation (issue 42)"; tests/data/qa/README.md).

The manual is Debian's `python-requests-doc` (`apt-get install python-requests-doc`), served
from /usr/share/doc/python-requests-doc/html by `http.server` in a thread of this script; the
crawl (`web_delay` 0) and the eval run in `vault-rag` subprocesses and only ever contact that
loopback server. The source is named `requests`, the prefix of the set's gold
(`requests:user/quickstart.html.md`: the page's file in the source's mirror folder). The data
dir is a fresh temporary folder unless `--data-dir` names one (kept, and re-served on the port
its source was added with, so a second run only refreshes: every page a 304).

    python scripts/web_eval.py [tests/data/qa/web-requests.jsonl] [--data-dir D] [--json]
        [--vault sidecar/vault_rag/sample_vault] [--site DIR] [--exclude _modules/]
        [-- more `vault-rag eval` args]

Prints page-level (the gold page) and section-level (the gold page under its gold heading)
R@5 and MRR@10, overall and by language, for `--collection requests` and for every collection
(the default search, vault + requests merged); `--json` prints the reports instead.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_QA = ROOT / "tests" / "data" / "qa" / "web-requests.jsonl"
DEFAULT_SITE = Path("/usr/share/doc/python-requests-doc/html")
SAMPLE_VAULT = ROOT / "sidecar" / "vault_rag" / "sample_vault"
SOURCE = "requests"
RUNS = {"alone": ["--collection", SOURCE], "merged": []}  # merged: the default, every collection


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve(site: Path, port: int = 0) -> Iterator[str]:
    """`site` over HTTP on 127.0.0.1 (`http.server`, which answers If-Modified-Since with 304)."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _cli(*args: str, capture: bool = False) -> str:
    env = {**os.environ, "VAULT_RAG_WEB_DELAY": "0"}
    command = [sys.executable, "-m", "vault_rag", *args]
    done = subprocess.run(command, env=env, text=True, capture_output=capture, check=False)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr or ''}")
    return done.stdout if capture else ""


def _known_port(where: list[str]) -> int:
    """The port the source was added with, when the data dir already has it (else 0: any)."""
    listed = json.loads(_cli("sources", "list", *where, "--json", capture=True))
    for source in listed:
        if source["name"] == SOURCE:
            return urlsplit(source.get("url") or source.get("path") or "").port or 0
    return 0


def _levels(report: dict) -> dict[str, dict]:
    ours = report["systems"]["ours"]
    return {"page": ours["note"], "section": ours["heading"]}


def _split_by_lang(qa: Path, folder: Path) -> dict[str, Path]:
    lines = [line for line in qa.read_text(encoding="utf-8").splitlines() if line.strip()]
    files = {}
    for lang in sorted({json.loads(line).get("lang", "en") for line in lines}):
        file = folder / f"{qa.stem}-{lang}.jsonl"
        kept = [line for line in lines if json.loads(line).get("lang", "en") == lang]
        file.write_text("\n".join(kept) + "\n", encoding="utf-8")
        files[lang] = file
    return files


def main() -> None:
    argv = sys.argv[1:]
    passthrough = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qa", type=Path, nargs="?", default=DEFAULT_QA)
    parser.add_argument("--data-dir", type=Path, help="default: a fresh temporary folder")
    parser.add_argument("--vault", type=Path, default=SAMPLE_VAULT)
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE)
    parser.add_argument("--json", action="store_true", help="print the eval reports as JSON")
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        help="an --exclude pattern for `sources add` (URL paths, e.g. _modules/ for Sphinx's "
        "source-code pages); only when the source is added",
    )
    args = parser.parse_args(own)
    if not (args.site / "index.html").is_file():
        sys.exit(f"{args.site} has no index.html: apt-get install python-requests-doc")
    with tempfile.TemporaryDirectory(prefix="vault-rag-web-eval-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        where = ["--vault", str(args.vault), "--data-dir", str(data_dir)]
        port = _known_port(where)
        with serve(args.site, port) as url:
            if not port:
                excluded = [a for p in args.exclude for a in ("--exclude", p)]
                _cli("sources", "add", SOURCE, url, "--kind", "web", *excluded, *where)
            print(f"serving {args.site} at {url}; data dir {data_dir}", file=sys.stderr)
            _cli("index", *where)
            files = {"all": args.qa, **_split_by_lang(args.qa, Path(tmp))}
            reports: dict[str, dict[str, dict]] = {}
            for run, chosen in RUNS.items():
                for scope, file in files.items():
                    command = ["eval", str(file), *where, *chosen, "--json", *passthrough]
                    out = _cli(*command, capture=True)
                    reports.setdefault(run, {})[scope] = json.loads(out)
    if args.json:
        print(json.dumps(reports, ensure_ascii=False, indent=2))
        return
    print("| search | questions | page R@5 | page MRR@10 | section R@5 | section MRR@10 |")
    print("|---|---:|---:|---:|---:|---:|")
    for run, scopes in reports.items():
        label = f"`{SOURCE}` alone" if run == "alone" else "merged with the vault"
        for scope, report in scopes.items():
            levels = _levels(report)
            page, section = levels["page"]["overall"], levels["section"]["overall"]
            print(
                f"| {label}{'' if scope == 'all' else f', {scope} only'} | {page['n']} "
                f"| {page['recall@5']:.3f} | {page['mrr@10']:.3f} "
                f"| {section['recall@5']:.3f} | {section['mrr@10']:.3f} |"
            )
    for run, scopes in reports.items():
        misses = scopes["all"]["systems"]["ours"]["misses"]
        print(f"\n{run}: {len(misses)} questions without the gold page at rank 1")
        for miss in misses:
            first = miss["first"] or {}
            print(
                f"  {miss['id']} rank {miss['gold_rank'] or '>10'}: {miss['question']}\n"
                f"      gold {', '.join(miss['gold'])}\n"
                f"      first {first.get('note_path')} # {first.get('heading_path')}"
            )


if __name__ == "__main__":
    main()
