"""The processes and probes behind `python -m benchmarks whole` and the benchmarks that run a
server: `vault-rag serve` and its API, and the full-index and naive-pipeline child processes."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import string
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import cli, free_port, sidecar_env

QUERIES = [
    "材质参数怎么设置",
    "蓝图调用 C++ 函数",
    "网络同步 复制 延迟 预测",
    "how to spawn an actor at runtime",
    "garbage collector and object references",
    "动画状态机 骨骼",
    "shader compile performance",
    "光照 阴影 烘焙",
    "UPROPERTY EditAnywhere",
    "async asset loading",
    "控件 事件 委托",
    "level streaming terrain foliage",
    "embed a heading from another note",
    "性能分析 帧率 显存",
    "Niagara particle emitter",
    "collision channel trace",
]


# -- processes ---------------------------------------------------------------------------------
class Server:
    """`vault-rag serve` in a subprocess, with a client for its API."""

    def __init__(
        self, vault: Path, data: Path, kind: str, work: Path, env: dict[str, str] | None = None
    ) -> None:
        import httpx

        from vault_rag.serving.server_token import load_or_create_token

        self.data = data
        self.work = work
        self.token = load_or_create_token(data)[0]
        self.port = free_port()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                *cli("serve", "--vault", str(vault), "--data-dir", str(data)),
                "--port",
                str(self.port),
            ],
            env=sidecar_env(kind, work, **(env or {})),
            stdout=subprocess.DEVNULL,
            stderr=open(work / "serve.log", "ab"),  # noqa: SIM115 - closed with the process
            stdin=subprocess.DEVNULL,
        )
        self.client = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}",
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=600,
        )

    def status(self) -> dict[str, Any] | None:
        import httpx

        try:
            response = self.client.get("/v1/status")
        except httpx.TransportError:
            return None
        if response.status_code >= 500:  # a broken server: stop rather than poll for an hour
            raise RuntimeError(f"GET /v1/status answered {response.status_code}; see serve.log")
        return response.json() if response.status_code == 200 else None

    def wait_reconciled(self, timeout: float = 3600) -> float:
        """Seconds from spawn until the start-up scan is applied and the writer is idle."""
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vault-rag serve exited with {self.proc.returncode}")
            status = self.status()
            if status and status["writer"]["reconciled"] and self._idle(status):
                return time.perf_counter() - self.started
            if time.perf_counter() - self.started > timeout:
                raise TimeoutError("the server did not finish its start-up scan")
            time.sleep(0.02)

    @staticmethod
    def _idle(status: dict[str, Any]) -> bool:
        writer = status["writer"]
        return writer["state"] == "idle" and not writer["queued"] and not status["pending"]

    def wait_idle(self, timeout: float = 3600) -> None:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            status = self.status()
            if status and self._idle(status):
                return
            time.sleep(0.05)
        raise TimeoutError("the server's writer did not become idle")

    def search(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        response = self.client.post("/v1/search", json={"query": query, "k": k})
        response.raise_for_status()
        return list(response.json()["results"])

    def peak_rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def stop(self) -> None:
        self.client.close()
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- helpers -----------------------------------------------------------------------------------
def poll(check: Callable[[], bool], timeout: float = 600, interval: float = 0.02) -> float:
    """Seconds until `check()` is true (polling); raises TimeoutError."""
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > timeout:
            raise TimeoutError("condition not met")
        time.sleep(interval)
    return time.perf_counter() - started


def marker(rng: random.Random) -> str:
    """A word found nowhere else: one BM25 token in every tokenizer (ASCII letters only)."""
    return "zqv" + "".join(rng.choices(string.ascii_lowercase, k=9))


def manifest_rows(data: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read the server's manifest read-only (WAL: never blocks its writer)."""
    uri = f"file:{data / 'manifest.sqlite3'}?mode=ro"
    with sqlite3.connect(uri, uri=True, timeout=30) as db:
        return db.execute(sql, params).fetchall()


def plain_notes(data: Path) -> list[str]:
    """Notes that embed nothing and are embedded by nothing: a PUT of the raw file is the
    resolved note, and an edit touches one note only."""
    rows = manifest_rows(
        data,
        "SELECT path FROM notes WHERE path NOT IN (SELECT note_path FROM deps)"
        " AND path NOT IN (SELECT target FROM deps) ORDER BY path",
    )
    return [r[0] for r in rows]


def put_note(server: Server, vault: Path, rel: str) -> None:
    file = vault / rel
    body = {
        "notes": [
            {
                "path": rel,
                "content": file.read_text(encoding="utf-8"),
                "mtime": file.stat().st_mtime_ns / 1e6,
            }
        ]
    }
    server.client.put("/v1/notes", json=body).raise_for_status()


def found(server: Server, word: str, rel: str) -> bool:
    return any(r["note_path"] == rel for r in server.search(word))


def index_worker(vault: str, data: str, kind: str) -> None:
    """Child process: a full index through the CLI's own objects, the model timed."""
    from vault_rag.serving.context import build_provider, make_indexer, open_index
    from vault_rag.settings import load_settings

    settings = load_settings(vault=Path(vault), data_dir=Path(data), embeddings=kind)
    inner = build_provider(settings)
    timed = TimedProvider(inner)
    index = open_index(settings, timed)  # type: ignore[arg-type]
    indexer = make_indexer(settings, index)
    started = time.perf_counter()
    summary = indexer.run()
    wall = time.perf_counter() - started
    chunks = index.manifest.chunks(index.manifest.chunk_ids())
    tokens = sum(inner.count_tokens(c.embed_text) for c in chunks.values())  # after the clock
    index.close()
    print(
        json.dumps(
            {
                "wall": wall,
                "notes": summary.notes_seen,
                "chunks": len(chunks),
                "embedded": summary.chunks_embedded,
                "tokens": tokens,
                "embed_seconds": timed.embed_seconds,
                "count_seconds": timed.count_seconds,
            }
        )
    )


class TimedProvider:
    """Wraps a provider and adds up the time spent inside it (model calls and token counts)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id, self.dimension, self.max_tokens = (
            inner.model_id,
            inner.dimension,
            inner.max_tokens,
        )
        self.embed_seconds = self.count_seconds = 0.0

    def count_tokens(self, text: str) -> int:
        started = time.perf_counter()
        try:
            return int(self.inner.count_tokens(text))
        finally:
            self.count_seconds += time.perf_counter() - started

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return list(self.inner.embed_documents(texts))
        finally:
            self.embed_seconds += time.perf_counter() - started

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed_query(text))


def _naive_build(vault: Path, provider: Any, store_dir: Path) -> tuple[Any, int]:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from vault_rag.embeddings.adapter import as_langchain

    docs = [
        Document(page_content=p.read_text(encoding="utf-8"), metadata={"source": str(p)})
        for p in sorted(vault.rglob("*.md"))
        if not any(part.startswith(".") for part in p.relative_to(vault).parts)
    ]
    # The tutorial's splitter and sizes.
    splits = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200).split_documents(
        docs
    )
    shutil.rmtree(store_dir, ignore_errors=True)
    store = Chroma.from_documents(
        splits, as_langchain(provider), persist_directory=str(store_dir), collection_name="naive"
    )
    return store, len(splits)


def naive_main(vault: str, kind: str, store_dir: str, queries: int, builds: int = 2) -> None:
    from vault_rag.embeddings.factory import make_provider

    provider = make_provider(kind)
    walls, chunks = [], 0
    for i in range(builds):  # first index, then the full rebuild an edit costs
        started = time.perf_counter()
        store, chunks = _naive_build(Path(vault), provider, Path(store_dir) / f"build-{i}")
        walls.append(time.perf_counter() - started)
    searches = []
    for i in range(queries):
        started = time.perf_counter()
        store.similarity_search(QUERIES[i % len(QUERIES)], k=10)
        searches.append(time.perf_counter() - started)
    print(json.dumps({"builds": walls, "chunks": chunks, "searches": searches[2:]}))
