"""schemathesis fuzzes every operation of shared-schemas/openapi.json against the running
server (valid and invalid inputs, with the token): no answer may be a 5xx. Bounded: a few
dozen examples per operation and a time budget. The spec file itself must match the code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from test_server_helpers import LiveServer, server_settings, wait_idle
from vault_rag.api import create_app

from fakes.openai_server import FakeOpenAIServer

SPEC = Path(__file__).resolve().parent.parent / "shared-schemas" / "openapi.json"
EXPORT = SPEC.parent.parent / "scripts" / "export_openapi.py"
TOKEN = "test-token-0123456789"


def test_the_shared_spec_matches_the_code():
    result = subprocess.run(
        [sys.executable, str(EXPORT), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_spec_documents_auth_errors_and_events():
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    assert "security" not in spec["paths"]["/v1/health"]["get"]
    for path, operations in spec["paths"].items():
        for operation in operations.values():
            if path != "/v1/health":
                assert operation["security"] == [{"HTTPBearer": []}]
                assert "401" in operation["responses"]
    schemas = spec["components"]["schemas"]
    for name in ("ProgressEvent", "DeltaEvent", "CitationsEvent", "FinalEvent", "ErrorEvent"):
        assert name in schemas
    assert "text/event-stream" in spec["paths"]["/v1/ask"]["post"]["responses"]["200"]["content"]
    assert "hashes" in schemas["NoteHashes"]["properties"]


def test_fuzzing_the_spec_finds_no_server_error(tmp_path, sample_vault):
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault, vault)
    with FakeOpenAIServer() as fake:
        settings = server_settings(vault, tmp_path / "data", fake, server_watch=False)
        with LiveServer(create_app(settings, token=TOKEN), token=TOKEN) as live:
            wait_idle(live)
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "schemathesis.cli",
                    "run",
                    str(SPEC),
                    "--url",
                    live.url,
                    "--header",
                    f"Authorization: Bearer {TOKEN}",
                    "--checks",
                    "not_a_server_error",
                    # A confirmed switch of embedding model re-embeds the whole vault and then
                    # reopens the index (a documented 503 `switching`); its inputs and failures
                    # are tested in test_api_embedding_switch.py. GET and the test route stay.
                    "--exclude-operation-id",
                    "put_embeddings_v1_settings_embeddings_put",
                    "--max-examples",
                    "40",
                    "--phases",
                    "examples,coverage,fuzzing",
                    "--seed",
                    "7",
                    "--workers",
                    "1",
                    "--request-timeout",
                    "60",
                    "--generation-database",
                    "none",
                    "--no-color",
                ],
                capture_output=True,
                text=True,
                timeout=600,
                cwd=tmp_path,
            )
            writer_error = live.state.writer.status.last_error
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert writer_error is None
