"""`langgraph dev` runs the answer graph as it is: the repository's langgraph.json, a `.env` as
`.env.example` documents it, no `--allow-blocking`, and agent-chat-ui's input shape.

langgraph-cli[inmem] needs grpcio<1.82 and protobuf<7, which the main environment cannot have
next to chromadb's newer ones, so it lives in its own venv, `.venv-langgraph`, which
`scripts/test-all.sh` (and so CI) creates. Without that venv this test skips and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from test_graph_helpers import shared_index
from vault_rag.cli import app
from vault_rag.graph.extractive import NO_MODEL_NOTE
from vault_rag.settings import Settings

REPO = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("VAULT_RAG_LANGGRAPH_VENV", REPO / ".venv-langgraph"))
LANGGRAPH = VENV / "bin" / "langgraph"
FLAGS = ("--no-browser", "--no-reload")  # and no --allow-blocking
START_TIMEOUT = 240.0  # the graph loads the embedding model before the server answers

MISSING = (
    f"no langgraph-cli in {VENV}: scripts/test-all.sh creates it with `pip install -e "
    "'.[studio]'` (a venv of its own: langgraph-cli[inmem] needs grpcio<1.82 and protobuf<7)"
)
# scripts/test-all.sh (CI) sets VAULT_RAG_LANGGRAPH_REQUIRED: there the test must run.
pytestmark = pytest.mark.skipif(
    not LANGGRAPH.exists() and not os.environ.get("VAULT_RAG_LANGGRAPH_REQUIRED"), reason=MISSING
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env_file(path: Path, values: dict[str, str]) -> None:
    """`.env.example` with its settings filled in, as a user would copy and edit it."""
    lines = []
    for line in (REPO / ".env.example").read_text(encoding="utf-8").splitlines():
        name = line.lstrip("# ").split("=", 1)[0]
        lines.append(f"{name}={values.pop(name)}" if name in values else line)
    assert not values, f".env.example does not document {sorted(values)}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """`langgraph dev` on a free loopback port, on the sample vault (a copy of the shared index,
    so the graph's start-up indexing has nothing to embed), with no language model."""
    assert LANGGRAPH.exists(), MISSING
    root = tmp_path_factory.mktemp("langgraph-dev")
    data_dir = root / "data"
    shutil.copytree(shared_index().data_dir, data_dir)
    config = json.loads((REPO / "langgraph.json").read_text(encoding="utf-8"))
    assert config["env"] == ".env", "langgraph.json must read the settings from .env"
    assert "--allow-blocking" not in json.dumps(config)
    # The repository's graphs and dependencies, from a folder of our own, so neither a
    # developer's .env nor the server's .langgraph_api files meet the repository.
    config["graphs"] = {
        name: str(REPO / spec.removeprefix("./")) for name, spec in config["graphs"].items()
    }
    config["dependencies"] = [str(REPO / d) for d in config["dependencies"]]
    _env_file(
        root / ".env",
        {
            "VAULT_RAG_VAULT": str(REPO / "sidecar" / "vault_rag" / "sample_vault"),
            "VAULT_RAG_DATA_DIR": str(data_dir),
        },
    )
    (root / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULT_RAG_", "LANGSMITH_"))}
    env |= {
        "PYTHONPATH": str(REPO / "sidecar"),  # this checkout's code, whatever venv installed
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # a test sends nothing anywhere
    }
    port = _free_port()
    log_path = root / "langgraph-dev.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(port), *FLAGS],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited ({proc.returncode}):\n{_tail(log_path)}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev not up in {START_TIMEOUT:.0f} s:\n{_tail(log_path)}")
            time.sleep(0.5)
        yield url, data_dir, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tail(path: Path, chars: int = 4000) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-chars:]


def _stream_run(
    url: str, thread_id: str, question: str, context: dict[str, Any] | None = None
) -> list[tuple[str, Any]]:
    """One run as agent-chat-ui starts it: the human message as `{"type", "content"}`, streamed
    (`context`: run configuration, as Studio sends it). Returns the SSE events as (event, data)."""
    body: dict[str, Any] = {
        "assistant_id": "vault_rag",
        "input": {"messages": [{"type": "human", "content": question}]},
        "stream_mode": ["values", "updates", "messages-tuple"],
    }
    if context is not None:
        body["context"] = context
    events: list[tuple[str, Any]] = []
    with httpx.stream(
        "POST", f"{url}/threads/{thread_id}/runs/stream", json=body, timeout=180
    ) as response:
        assert response.status_code == 200, response.read()
        name = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line.split(":", 1)[1])))
    return events


def _last_values(events: list[tuple[str, Any]]) -> dict[str, Any]:
    values = [data for name, data in events if name == "values"]
    assert values, events
    return values[-1]


def test_a_thread_in_agent_chat_ui_shape_gets_cited_answers(server):
    url, data_dir, log_path = server
    thread_id = httpx.post(f"{url}/threads", json={}, timeout=30).json()["thread_id"]

    first = _stream_run(url, thread_id, "How do I replicate a property to clients?")
    assert not [e for e in first if e[0] == "error"], first
    values = _last_values(first)
    kinds = [m["type"] for m in values["messages"]]
    assert kinds == ["human", "ai"], values["messages"]
    reply = values["messages"][-1]["content"]
    assert "[[Networking/Replication and RPCs" in reply, reply
    assert NO_MODEL_NOTE in values["notes"] and NO_MODEL_NOTE not in reply  # notices: `notes`
    assert values["citations"], values
    assert values["citations"][0]["note_path"] == "Networking/Replication and RPCs.md"
    first_id = values["answer_id"]
    # No internal reducer markers in what Studio shows as state updates: the first step's
    # update empties the per-turn fields with plain empty values (the server shows the output
    # schema's fields there).
    streamed = [data for name, data in first if name == "updates"]
    updates = json.dumps(streamed)
    assert '"clear"' not in updates and '"reset"' not in updates, updates
    assert "__overwrite__" not in updates, updates
    started = next(u["take_question"] for u in streamed if "take_question" in u)
    assert started["notes"] == [] and started["usage"]["llm_calls"] == 0, started

    # The follow-up joins the conversation (the thread holds both turns) and is answered too,
    assert not any("hybrid mode" in n for n in values["notes"]), values["notes"]
    # ...with a configuration value set as Studio sends one (`context`): it reaches the nodes.
    follow = "Which condition sends it only to the owning client?"
    second = _stream_run(url, thread_id, follow, {"web_mode": "hybrid"})
    assert not [e for e in second if e[0] == "error"], second
    values = _last_values(second)
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "human", "ai"]
    follow_up = values["messages"][-1]["content"]
    assert "COND_OwnerOnly" in follow_up, follow_up
    assert "[[Networking/Replication and RPCs" in follow_up, follow_up
    assert any("hybrid mode" in n for n in values["notes"]), values["notes"]

    state = httpx.get(f"{url}/threads/{thread_id}/state", timeout=30).json()
    assert len(state["values"]["messages"]) == 4
    # The answers were recorded where the CLI finds them, so `vault-rag feedback` rates them.
    vault = REPO / "sidecar" / "vault_rag" / "sample_vault"
    for answer_id in (first_id, values["answer_id"]):
        rated = CliRunner().invoke(
            app,
            ["feedback", answer_id, "up", "--vault", str(vault), "--data-dir", str(data_dir)],
        )
        assert rated.exit_code == 0, rated.output
        assert "recorded" in rated.output
    assert "BlockingError" not in _tail(log_path, 10**7)


def test_studio_sees_the_schemas_and_the_configuration_with_its_defaults(server):
    url, _, _ = server
    found = httpx.post(f"{url}/assistants/search", json={"graph_id": "vault_rag"}, timeout=30)
    assistant = found.json()[0]["assistant_id"]
    schemas = httpx.get(f"{url}/assistants/{assistant}/schemas", timeout=30)
    assert schemas.status_code == 200, schemas.text
    schemas = schemas.json()
    assert "messages" in schemas["input_schema"]["properties"]
    output = schemas["output_schema"]["properties"]
    assert {"messages", "answer", "citations", "answer_id", "notes"} <= set(output)
    context = schemas["context_schema"]["properties"]
    top_k = context["top_k"]
    assert top_k["default"] == Settings.model_fields["top_k"].default  # one home for defaults
    assert top_k["description"]
    assert all(field.get("description") for field in context.values()), context
