"""Soak: minutes of mixed work against one real `vault-rag serve`, with kill -9 and restarts.

Not a CI test (issue 13). On a copy of the sample vault it runs, at random: plugin-style PUTs
of edited notes, deletes, renames (on disk, then the API), disk-only edits (the watcher),
searches, asks on a few threads and hostile files (odd names, FIFOs, an alias bomb); every so
often it kills the server with SIGKILL and starts it again. At the end it checks that the index
equals a clean rebuild of the vault and that no
thread lost a turn (each thread holds two messages per answered ask), and prints the figures.

    python scripts/soak.py --minutes 10 [--seed 1] [--workdir DIR]

Embeddings come from the tests' wire-level fake OpenAI server (fast and deterministic: what is
soaked is the server's bookkeeping, not the model); answers are extractive (no chat model).
Exit code 0 when both checks hold.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "sidecar")]

from test_server_helpers import (  # noqa: E402
    index_snapshot,
    rebuild_snapshot,
    server_settings,
    snapshot_diff,
)
from vault_rag.index.vault_index import VaultIndex  # noqa: E402
from vault_rag.serving.context import build_provider  # noqa: E402
from vault_rag.serving.sample import sample_vault_path  # noqa: E402
from vault_rag.serving.server_token import TOKEN_FILE  # noqa: E402
from vault_rag.vault.embeds import resolve_note  # noqa: E402

from fakes.openai_server import FakeOpenAIServer  # noqa: E402

# Requests answered with an error status, by "METHOD path status" (a refused request still
# counts as done in the operation table; this says how many were refused, and why).
REFUSED: Counter[str] = Counter()


def count_refused(response: httpx.Response) -> None:
    if response.status_code >= 400:
        request = response.request
        REFUSED[f"{request.method} {request.url.path} {response.status_code}"] += 1


WORDS = "okapi tapir quokka ocelot margay narwhal axolotl pangolin sloth capybara".split()  # noqa: SIM905


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    def __init__(self, env: dict[str, str], vault: Path, data: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "vault_rag", "serve", "--vault", str(vault)]
        command += ["--data-dir", str(data), "--port", str(self.port), "--log-level", "warning"]
        with log.open("a") as sink:
            self.proc = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"serve exited with {self.proc.returncode}; see {log}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("serve did not start in 300 s")
            time.sleep(0.2)
        token = (data / TOKEN_FILE).read_text().strip()
        self.client = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
            event_hooks={"response": [count_refused]},
        )

    def idle(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.client.get("/v1/status").json()
            writer = status["writer"]
            quiet = writer["reconciled"] and writer["state"] == "idle" and not writer["queued"]
            if quiet and not status["pending"]:
                return
            time.sleep(0.3)
        raise SystemExit("the server did not become idle")

    def kill(self) -> None:
        self.client.close()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


def plugin_post(vault: Path, rel: str) -> dict[str, object]:
    """What the plugin posts for a note: frontmatter + body with embeds resolved, its mtime."""
    path = vault / rel
    mtime = path.stat().st_mtime_ns / 1e6
    resolved = resolve_note(vault, rel)
    head = path.read_text(encoding="utf-8").split("\n")[: resolved.body_start_line - 1]
    content = "\n".join([*head, resolved.text]) if head else resolved.text
    return {"path": rel, "content": content, "embeds": resolved.dependencies, "mtime": mtime}


def ask(server: Server, question: str, thread_id: str | None) -> dict | None:
    body = {"question": question, **({"thread_id": thread_id} if thread_id else {})}
    final = None
    with server.client.stream("POST", "/v1/ask", json=body) as response:
        event = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "final":
                final = json.loads(line[5:].strip())
    return final


# A YAML alias bomb under `aliases:` (issue 31, defect 8): 9 levels, 9x each.
ALIAS_BOMB = (
    "---\naliases:\n  - &a [x,x,x,x,x,x,x,x,x]\n"
    + "".join(f"  - &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
    + "---\n# Bomb\n\nText.\n"
)


def hostile(vault: Path, n: int, rng: random.Random) -> str:
    """Put one hostile file in the vault (issue 31): a name with no safe vault path, a FIFO
    named .md, or an alias bomb. The server must skip or refuse it and go on."""
    folder = vault / "Hostile"
    folder.mkdir(exist_ok=True)
    kind = rng.choice(["colon", "backslash", "bytes", "fifo", "bomb"])
    if kind == "colon":  # a top-level name whose second character is ':' (a Windows drive)
        (vault / f"Q: quokkas {n}.md").write_text("# Q\n", encoding="utf-8")
    elif kind == "backslash":
        (folder / f"a\\b {n}.md").write_text("# B\n", encoding="utf-8")
    elif kind == "bytes":  # not UTF-8
        name = os.fsencode(folder) + b"/bad-\xff-" + str(n).encode() + b".md"
        with open(name, "wb") as handle:
            handle.write(b"# Bytes\n")
    elif kind == "fifo":
        os.mkfifo(folder / f"pipe {n}.md")
    else:
        (folder / f"bomb {n}.md").write_text(ALIAS_BOMB, encoding="utf-8")
    return kind


def plain_note(path: Path, vault: Path) -> bool:
    """A note the soak may edit, post, rename or delete (not one of the hostile files)."""
    rel = path.relative_to(vault).as_posix()
    return (
        path.is_file()  # not a FIFO
        and "Hostile" not in path.parts
        and ":" not in rel
        and "\\" not in rel
        and rel.isprintable()
        and not any("\udc80" <= c <= "\udcff" for c in rel)  # undecodable bytes
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--kill-every", type=float, default=45.0, help="mean seconds between kills")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="vault-rag-soak-"))
    shutil.rmtree(work / "vault", ignore_errors=True)
    shutil.rmtree(work / "data", ignore_errors=True)
    shutil.rmtree(work / "clean", ignore_errors=True)
    vault, data, log = work / "vault", work / "data", work / "serve.log"
    shutil.copytree(sample_vault_path(), vault)
    ops: Counter[str] = Counter()
    turns: dict[str, int] = {}  # thread id → answered asks
    started = time.monotonic()
    with FakeOpenAIServer() as fake:
        env = dict(os.environ)
        env.update(
            VAULT_RAG_EMBEDDINGS="openai",
            VAULT_RAG_EMBEDDINGS_MODEL="fake-embedding",
            VAULT_RAG_EMBEDDINGS_BASE_URL=fake.base_url,
            VAULT_RAG_EMBEDDINGS_API_KEY="k",
            VAULT_RAG_WATCH_DEBOUNCE="0.3",
        )
        for key in ("VAULT_RAG_LLM_MODEL", "VAULT_RAG_CONFIG"):
            env.pop(key, None)
        server = Server(env, vault, data, log)
        next_kill = time.monotonic() + rng.expovariate(1 / args.kill_every)
        end = started + args.minutes * 60
        while time.monotonic() < end:
            notes = sorted(
                p
                for p in vault.rglob("*.md")
                if ".obsidian" not in p.parts and plain_note(p, vault)
            )
            note = rng.choice(notes)
            rel = note.relative_to(vault).as_posix()
            kind = rng.choices(
                ["put", "delete", "rename", "disk", "create", "search", "ask", "hostile"],
                weights=[5, 1, 1, 4, 1, 4, 2, 1],
            )[0]
            try:
                if kind in ("put", "disk"):
                    with note.open("a", encoding="utf-8") as handle:
                        handle.write(f"\n\nSoak {ops.total()}: {rng.choice(WORDS)}.\n")
                    if kind == "put":
                        item = plugin_post(vault, rel)
                        server.client.put("/v1/notes", json={"notes": [item]})
                elif kind == "create":
                    new = vault / "Soak" / f"Note {ops.total()}.md"
                    new.parent.mkdir(exist_ok=True)
                    new.write_text(f"# Soak {ops.total()}\n\n{' '.join(rng.sample(WORDS, 4))}.\n")
                elif kind == "delete" and len(notes) > 10:
                    note.unlink()
                    server.client.request("DELETE", "/v1/notes", json={"paths": [rel]})
                elif kind == "rename":
                    target = vault / "Moved" / f"{ops.total()} {note.name}"
                    target.parent.mkdir(exist_ok=True)
                    note.rename(target)
                    pair = {"old_path": rel, "new_path": target.relative_to(vault).as_posix()}
                    server.client.post("/v1/notes/rename", json={"renames": [pair]})
                elif kind == "search":
                    server.client.post("/v1/search", json={"query": rng.choice(WORDS)})
                elif kind == "hostile":
                    kind = f"hostile: {hostile(vault, ops.total(), rng)}"
                elif kind == "ask":
                    thread = rng.choice([None, *list(turns)[:3]])
                    final = ask(server, f"What about {rng.choice(WORDS)}?", thread)
                    if final and final.get("thread_id"):
                        turns[final["thread_id"]] = turns.get(final["thread_id"], 0) + 1
                ops[kind] += 1
            except httpx.HTTPError:
                ops[f"{kind} (interrupted)"] += 1
            if time.monotonic() > next_kill:
                server.kill()
                ops["kill -9"] += 1
                server = Server(env, vault, data, log)
                next_kill = time.monotonic() + rng.expovariate(1 / args.kill_every)
        server.idle()
        lost = {}
        for thread, count in turns.items():
            messages = server.client.get(f"/v1/threads/{thread}").json()["messages"]
            if len(messages) != 2 * count:
                lost[thread] = (len(messages), 2 * count)
        server.stop()
        settings = server_settings(vault, data, fake)
        index = VaultIndex(vault, data, build_provider(settings))
        try:
            after = index_snapshot(index)
        finally:
            index.close()
        diff = snapshot_diff(after, rebuild_snapshot(settings, work / "clean"))
    minutes = (time.monotonic() - started) / 60
    print(f"soak: {minutes:.1f} min, seed {args.seed}, work dir {work}")
    print("| operation | count |\n|---|---|")
    for name, count in sorted(ops.items()):
        print(f"| {name} | {count} |")
    print(f"| notes at the end | {len(after['notes'])} |")
    print(f"| chunks at the end | {len(after['chunks'])} |")
    print(f"| threads / answered turns | {len(turns)} / {sum(turns.values())} |")
    for name, count in sorted(REFUSED.items()):
        print(f"| answered {name} | {count} |")
    print(f"index equals a clean rebuild: {'yes' if not diff else 'NO: ' + json.dumps(diff)}")
    print(f"threads that lost a turn: {len(lost)} {lost if lost else ''}")
    return 0 if not diff and not lost else 1


if __name__ == "__main__":
    raise SystemExit(main())
