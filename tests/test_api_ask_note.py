"""`POST /v1/ask` with `note` (the plugin's "Ask about this note") on a real uvicorn server:
the stream says which note it uses, retrieval prefers that note and its links, the selection
is searched as one more query, `final.focus` counts the citations from it; a path outside the
vault is 400 before anything streams, a note the index lacks is answered without it. No chat
model (the graph's extractive answer), hash embeddings."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from test_server_helpers import LiveServer, read_sse
from vault_rag.graph.events import EVENT_MODELS

MODELS = {model.EVENT: model for model in EVENT_MODELS}
NOTES = {
    "Lighting/Lumen.md": "# Lumen\n\nLumen bounces light between surfaces with screen traces "
    "and distance fields. Shadows come from [[Shadows]].\n",
    "Lighting/Shadows.md": "# Shadows\n\nVirtual shadow maps cast sharp light shadows from "
    "every light.\n",
    "Setup.md": "# Setup\n\nTurn on [[Lumen]] in the project settings before you light a level.\n",
    "Overview.md": "# Global illumination\n\nGlobal illumination: light bounces between "
    "surfaces, and global illumination bounces light again and again.\n",
    "Cooking.md": "# Pasta\n\nBoil the pasta for ten minutes in salted water, then drain it.\n",
}
QUESTION = "how does global illumination bounce light between surfaces?"


def write_vault(root: Path) -> None:
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


# The module's live server (conftest `live`): this vault, hash embeddings, no watcher, no model,
# and no link signal: Setup's link to Lumen would lift Lumen by itself (retrieval/link_signal.py),
# and these tests are about the focus on a note alone.
SERVER_SETTINGS = {"embeddings": "hash", "server_watch": False, "link_weight": 0.0}
SERVER_VAULT = write_vault


def ask(live: LiveServer, body: dict) -> list[tuple[str, dict]]:
    events = []
    with (
        httpx.Client(timeout=60) as client,
        client.stream("POST", f"{live.url}/v1/ask", json=body, headers=live.auth) as response,
    ):
        assert response.status_code == 200, response.read()
        for event in read_sse(response.iter_lines()):
            data = json.loads(event.data)
            MODELS[event.event].model_validate(data)  # the documented event models only
            events.append((event.event, data))
    return events


def final_of(events: list[tuple[str, dict]]) -> dict:
    assert events[-1][0] == "final", events[-1]
    return events[-1][1]


def vault_notes(final: dict) -> list[str]:
    return [c["note_path"] for c in final["citations"] if c.get("kind") == "vault"]


def test_without_a_note_the_best_match_of_the_whole_vault_comes_first(live):
    final = final_of(ask(live, {"question": QUESTION}))
    assert vault_notes(final)[0] == "Overview.md"
    assert final["focus"] is None


def test_asking_about_a_note_uses_it_and_says_so(live):
    body = {"question": QUESTION, "note": {"path": "Lighting/Lumen.md", "links": ["Setup.md"]}}
    events = ask(live, body)
    progress = [data for kind, data in events if kind == "progress"]
    assert [p["node"] for p in progress[:2]] == ["take_question", "focus"]
    # Setup.md links to it (Obsidian's backlink, sent by the client); Shadows.md from its text.
    assert progress[1] == {
        "node": "focus",
        "note": "Lighting/Lumen.md",
        "indexed": True,
        "linked": 2,
        "selection": False,
    }
    final = final_of(events)
    cited = vault_notes(final)
    assert cited[0] == "Lighting/Lumen.md"
    assert final["focus"] == {
        "path": "Lighting/Lumen.md",
        "indexed": True,
        "linked": 2,
        "selection": False,
        "cited": cited.count("Lighting/Lumen.md"),
        "cited_linked": sum(p in ("Setup.md", "Lighting/Shadows.md") for p in cited),
    }
    assert final["focus"]["cited"] >= 1


def test_a_question_the_vault_does_not_cover_is_answered_from_the_note_asked_about(live):
    question = "what does this note say?"
    declined = final_of(ask(live, {"question": question}))
    assert declined["intent"] == "off_topic"  # weak evidence in the whole vault: "not covered"
    final = final_of(ask(live, {"question": question, "note": {"path": "Lighting/Lumen.md"}}))
    assert final["intent"] == "on_topic"
    assert vault_notes(final)[0] == "Lighting/Lumen.md" and final["focus"]["cited"] >= 1


def test_the_selection_is_searched_as_one_more_query(live):
    question = "why is this better?"
    without = final_of(ask(live, {"question": question, "note": {"path": "Lighting/Lumen.md"}}))
    assert without["focus"]["selection"] is False
    assert "Overview.md" not in vault_notes(without)
    selection = "Lumen bounces light between surfaces with screen traces"
    note = {"path": "Lighting/Lumen.md", "selection": f"  {selection}\n  "}
    events = ask(live, {"question": question, "note": note})
    queries = [
        d["query"] for kind, d in events if kind == "progress" and d["node"] == "retrieve_vault"
    ]
    assert selection in queries and question in queries
    final = final_of(events)
    assert final["focus"]["selection"] is True
    # The selected sentence also finds the note that says the same (light bounces between
    # surfaces), which the vague question alone does not.
    assert vault_notes(final)[0] == "Lighting/Lumen.md" and "Overview.md" in vault_notes(final)


def test_a_note_the_index_does_not_have_is_named_but_not_used(live):
    events = ask(live, {"question": QUESTION, "note": {"path": "Drafts/New idea.md"}})
    focus_event = next(d for kind, d in events if kind == "progress" and d["node"] == "focus")
    assert focus_event["indexed"] is False and focus_event["linked"] == 0
    final = final_of(events)
    assert final["focus"]["indexed"] is False and final["focus"]["cited"] == 0
    assert vault_notes(final)[0] == "Overview.md"  # retrieval as without a note


def test_the_next_turn_of_a_thread_is_about_a_note_only_when_it_says_so(live):
    thread = "thread-note-0001"
    first = final_of(
        ask(
            live, {"question": QUESTION, "thread_id": thread, "note": {"path": "Lighting/Lumen.md"}}
        )
    )
    assert first["focus"]["path"] == "Lighting/Lumen.md"
    second = final_of(ask(live, {"question": QUESTION, "thread_id": thread}))
    assert second["focus"] is None and vault_notes(second)[0] == "Overview.md"


def test_bad_notes_are_refused_before_anything_streams(client):
    for note, status, code in [
        ({"path": "../outside.md"}, 400, "unsafe_path"),
        ({"path": "/etc/passwd.md"}, 400, "unsafe_path"),
        ({"path": "Setup.md", "links": ["../../x.md"]}, 400, "unsafe_path"),
        ({"path": ""}, 422, "invalid_request"),
        ({"path": "Setup.md", "selection": "x" * 20_001}, 422, "invalid_request"),
        ({"path": "Setup.md", "links": ["a.md"] * 1001}, 422, "invalid_request"),
        ({"path": "Setup.md", "extra": 1}, 422, "invalid_request"),
    ]:
        response = client.post("/v1/ask", json={"question": QUESTION, "note": note})
        assert response.status_code == status, (note, response.text)
        assert response.json()["code"] == code
        assert response.headers["content-type"].startswith("application/json")
