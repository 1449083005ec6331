"""Issue 31, defect 5 (the sidecar's side): the plugin sent its token to whatever answered
200 on `/v1/health`. The sidecar now proves it holds the token without sending it: with
`?challenge=…`, `/v1/health` answers `proof`, the HMAC of the challenge keyed by the token.
The vectors in `shared-schemas/fixtures/health-proof.json` are checked by the plugin too.
A real uvicorn server."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import httpx

from test_server_helpers import LiveServer
from vault_rag.serving.server_token import PROOF_CONTEXT, token_proof

FIXTURE = Path(__file__).resolve().parents[1] / "shared-schemas" / "fixtures" / "health-proof.json"
SERVER_SETTINGS = {"server_watch": False}


def test_the_shared_vectors() -> None:
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert fixture["context"] == PROOF_CONTEXT
    for case in fixture["cases"]:
        assert token_proof(case["token"], case["challenge"]) == case["proof"]


def test_health_proves_the_token_without_sending_it(live: LiveServer) -> None:
    challenge = secrets.token_hex(16)
    plain = httpx.get(f"{live.url}/v1/health", timeout=10)  # no token needed, no proof asked
    assert plain.status_code == 200 and plain.json()["proof"] is None
    answer = httpx.get(f"{live.url}/v1/health", params={"challenge": challenge}, timeout=10)
    assert answer.status_code == 200
    body = answer.json()
    assert body["proof"] == token_proof(live.token, challenge)
    assert body["proof"] != token_proof("some-other-token", challenge)
    assert live.token not in answer.text
    another = httpx.get(f"{live.url}/v1/health", params={"challenge": challenge + "x"}, timeout=10)
    assert another.json()["proof"] != body["proof"]  # bound to the challenge: no replay


def test_a_too_short_challenge_is_refused(live: LiveServer) -> None:
    answer = httpx.get(f"{live.url}/v1/health", params={"challenge": "abc"}, timeout=10)
    assert answer.status_code in (400, 422), answer.text
