"""`Retry-After` on busy answers (api/retry_after.py): which answers get one and how long.
The live 409/503 answers are checked on real uvicorn in test_api_embedding_switch.py; these
pin the rule for every code, including those waiting cannot mend."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vault_rag.api.retry_after import MAX_SECONDS, retry_after, with_retry_after


def app_state(eta: int | None = None) -> SimpleNamespace:
    status = SimpleNamespace(eta_seconds=lambda: eta)
    return SimpleNamespace(embedding_rebuild=SimpleNamespace(status=status))


@pytest.mark.parametrize(
    ("status", "code", "seconds"),
    [
        (503, "starting", 3),
        (503, "switching", 3),
        (503, "store_unavailable", 5),
        (503, "embedding_unavailable", 10),
        (409, "switch_running", 10),  # no estimate yet: a short poll
        (503, "index_damaged", None),  # waiting does not repair it
        (409, "store_unsupported", None),
        (404, "starting", None),
    ],
)
def test_which_answers_say_when(status, code, seconds):
    assert retry_after(app_state(), status, code) == seconds


def test_a_rebuild_under_way_gives_its_own_estimate_bounded():
    assert retry_after(app_state(eta=42), 409, "switch_running") == 42
    assert retry_after(app_state(eta=0), 409, "switch_running") == 1
    # An hour's rebuild says an hour (the plugin tells the user), only absurd values are capped.
    assert retry_after(app_state(eta=3_600), 409, "switch_running") == 3_600
    assert retry_after(app_state(eta=10**7), 409, "switch_running") == MAX_SECONDS


def test_a_routes_own_retry_after_wins():
    assert with_retry_after(app_state(), 503, "starting", {"Retry-After": "9"}) == {
        "Retry-After": "9"
    }
    assert with_retry_after(app_state(), 503, "starting", None) == {"Retry-After": "3"}
    assert with_retry_after(app_state(), 400, "bad_request", None) is None
