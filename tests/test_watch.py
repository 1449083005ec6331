"""The vault watcher: batching and filtering on its own, then with the server — files edited,
created, deleted and renamed on disk show up in search within the debounce window, and a file
that is still being written is looked at again."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from test_server_helpers import LiveServer, wait_idle, wait_until
from vault_rag.index.note_file import FileInFlux
from vault_rag.index.updates import sync
from vault_rag.watch import VaultWatcher

TOKEN = "test-token-0123456789"
SETTLE = 5.0  # seconds allowed after the debounce window for the batch to be indexed


class Recorder:
    def __init__(self) -> None:
        self.batches: list[tuple[set[str], set[str]]] = []

    def __call__(self, paths: set[str], dirs: set[str]) -> None:
        self.batches.append((paths, dirs))

    @property
    def paths(self) -> set[str]:
        return set().union(*(b[0] for b in self.batches)) if self.batches else set()


@pytest.fixture
def watched(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    recorder = Recorder()
    watcher = VaultWatcher(
        root, recorder, ignores=[".obsidian", ".trash", "Templates/*"], debounce=0.3, max_delay=10
    )
    watcher.start()
    yield root, recorder, watcher
    watcher.stop()


def settle(watcher: VaultWatcher, recorder: Recorder, batches: int) -> None:
    wait_until(lambda: len(recorder.batches) >= batches and not watcher.pending, 15)
    time.sleep(0.5)  # nothing more may follow


def test_a_burst_of_a_thousand_events_is_one_batch(watched):
    root, recorder, watcher = watched
    (root / "Notes").mkdir()
    for i in range(1000):
        (root / "Notes" / f"n{i:04}.md").write_text(f"# {i}\n", encoding="utf-8")
    settle(watcher, recorder, 1)
    assert len(recorder.batches) == 1
    assert recorder.paths == {f"Notes/n{i:04}.md" for i in range(1000)}
    assert watcher.events_seen >= 1000


def test_ignored_folders_globs_and_other_files_stay_ignored(watched):
    root, recorder, watcher = watched
    for folder in (".obsidian", ".trash", "Templates", "Sub/.hidden", "Keep"):
        (root / folder).mkdir(parents=True)
    (root / ".obsidian" / "workspace.md").write_text("x")
    (root / ".trash" / "old.md").write_text("x")
    (root / "Templates" / "daily.md").write_text("x")
    (root / "Sub" / ".hidden" / "n.md").write_text("x")
    (root / "Keep" / "image.png").write_bytes(b"\x89PNG")
    (root / "Keep" / "note.md").write_text("x")
    settle(watcher, recorder, 1)
    assert recorder.paths == {"Keep/note.md"}


def test_pdfs_and_canvases_are_watched_when_their_kinds_are_indexed(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    recorder = Recorder()
    watcher = VaultWatcher(
        root, recorder, suffixes=(".md", ".pdf", ".canvas"), debounce=0.3, max_delay=10
    )
    watcher.start()
    try:
        (root / "Papers").mkdir()
        (root / "Papers" / "a.pdf").write_bytes(b"%PDF-1.4\n")
        (root / "Papers" / "B.PDF").write_bytes(b"%PDF-1.4\n")
        (root / "board.canvas").write_text('{"nodes": []}')
        (root / "image.png").write_bytes(b"\x89PNG")
        settle(watcher, recorder, 1)
        assert recorder.paths == {"Papers/a.pdf", "Papers/B.PDF", "board.canvas"}
        first = len(recorder.batches)
        (root / "Papers" / "a.pdf").rename(root / "a.pdf")
        (root / "board.canvas").unlink()
        settle(watcher, recorder, first + 1)
        later = set().union(*(b[0] for b in recorder.batches[first:]))
        assert {"Papers/a.pdf", "a.pdf", "board.canvas"} <= later
    finally:
        watcher.stop()


def test_renames_report_both_paths_and_folder_moves_the_folders(watched):
    root, recorder, watcher = watched
    (root / "A").mkdir()
    (root / "A" / "one.md").write_text("x")
    settle(watcher, recorder, 1)
    recorder.batches.clear()
    (root / "A" / "one.md").rename(root / "A" / "two.md")
    settle(watcher, recorder, 1)
    assert recorder.paths == {"A/one.md", "A/two.md"}
    recorder.batches.clear()
    (root / "A").rename(root / "B")
    settle(watcher, recorder, 1)
    dirs = set().union(*(b[1] for b in recorder.batches))
    assert {"A", "B"} <= dirs


# -- with the server ---------------------------------------------------------------------------
# The module's live server (conftest `live`): following the disk with short delays.
SERVER_SETTINGS = {"watch_debounce": 0.3, "watch_max_delay": 1.0}


def found(live: LiveServer, query: str) -> list[str]:
    with httpx.Client(base_url=live.url, headers=live.auth, timeout=30) as client:
        response = client.post("/v1/search", json={"query": query, "k": 10})
    assert response.status_code == 200
    # BM25 hits only: the fake embeddings rank at random, BM25 shows what text is indexed.
    hits = response.json()["results"]
    return [hit["note_path"] for hit in hits if hit["lexical_score"] is not None]


def follows(live: LiveServer, query: str, present: str | None, absent: str | None = None) -> float:
    """Seconds until search for `query` lists `present` and not `absent`."""
    started = time.monotonic()
    window = live.state.settings.watch_debounce + SETTLE

    def ok() -> bool:
        paths = found(live, query)
        return (present is None or present in paths) and (absent is None or absent not in paths)

    wait_until(ok, window, interval=0.1)
    return time.monotonic() - started


def test_create_edit_rename_delete_on_disk_follow_in_search(live):
    vault = live.state.index.vault_root
    note = vault / "Field" / "Wombat.md"
    note.parent.mkdir()
    note.write_text("# Wombat\n\nWombats leave cube-shaped droppings.\n", encoding="utf-8")
    follows(live, "cube droppings", "Field/Wombat.md")

    note.write_text("# Wombat\n\nWombats dig long burrows with strong claws.\n", encoding="utf-8")
    follows(live, "burrows claws", "Field/Wombat.md")
    chunks = live.state.index.manifest.note_chunks("Field/Wombat.md")
    assert "burrows" in chunks[0].text and "cube" not in chunks[0].text

    wait_idle(live)
    embedded = live.state.writer.status.chunks_embedded
    (vault / "Moved").mkdir()
    note.rename(vault / "Moved" / "Wombat.md")
    follows(live, "burrows claws", "Moved/Wombat.md")
    # The move may arrive as two batches (watchdog reports an unpaired move-from late when the
    # target folder is brand new); the old path still goes within the window.
    wait_until(lambda: live.state.index.manifest.note("Field/Wombat.md") is None, SETTLE)
    wait_idle(live)
    # a folder move keeps the title: every vector is reused, none is embedded again
    assert live.state.writer.status.chunks_embedded == embedded

    (vault / "Moved" / "Wombat.md").unlink()
    follows(live, "burrows claws", None, absent="Moved/Wombat.md")
    assert live.state.index.manifest.note("Moved/Wombat.md") is None


def test_a_pdf_and_a_canvas_on_disk_follow_in_search(live):
    """Issue 25: the watcher reads PDFs and canvases too (copied in, moved, deleted on disk)."""
    import json

    from pdf_fixtures import write_pdf

    vault = live.state.index.vault_root
    write_pdf(
        vault / "Numbats.pdf",
        [(None, ["Introduction."]), ("Diet", ["Numbats eat termites, twenty thousand a day."])],
    )
    follows(live, "numbats termites", "Numbats.pdf")
    (vault / "Field").mkdir(exist_ok=True)
    (vault / "Numbats.pdf").rename(vault / "Field" / "Numbats.pdf")
    follows(live, "numbats termites", "Field/Numbats.pdf", absent="Numbats.pdf")
    with httpx.Client(base_url=live.url, headers=live.auth, timeout=30) as client:
        hits = client.post("/v1/search", json={"query": "numbats termites", "k": 3}).json()
    top = next(h for h in hits["results"] if h["note_path"] == "Field/Numbats.pdf")
    assert (top["kind"], top["page"], top["anchor"]) == ("pdf", 2, "page=2")

    card = {"id": "t", "type": "text", "x": 0, "y": 0, "width": 9, "height": 9}
    board = {"nodes": [{**card, "text": "Bilbies\nBilbies have long ears and dig spirals."}]}
    (vault / "Zoo.canvas").write_text(json.dumps(board), encoding="utf-8")
    follows(live, "bilbies spirals", "Zoo.canvas")
    (vault / "Zoo.canvas").unlink()
    (vault / "Field" / "Numbats.pdf").unlink()
    follows(live, "bilbies spirals", None, absent="Zoo.canvas")
    follows(live, "numbats termites", None, absent="Field/Numbats.pdf")


def test_a_folder_moved_as_a_whole(live):
    vault = live.state.index.vault_root
    (vault / "Zoo").mkdir()
    for name in ("Lemur", "Quoll"):
        (vault / "Zoo" / f"{name}.md").write_text(f"# {name}\n\nThe {name} is odd.\n")
    follows(live, "Quoll odd", "Zoo/Quoll.md")
    (vault / "Zoo").rename(vault / "Park")
    follows(live, "Quoll odd", "Park/Quoll.md", absent="Zoo/Quoll.md")
    wait_idle(live)
    notes = live.state.index.manifest.notes()
    assert {"Park/Lemur.md", "Park/Quoll.md"} <= set(notes) and "Zoo/Lemur.md" not in notes


def test_ignored_folders_are_not_indexed(live):
    vault = live.state.index.vault_root
    (vault / ".obsidian").mkdir(exist_ok=True)
    (vault / ".obsidian" / "Secret.md").write_text("# Secret\n\nplatypus venom spur\n")
    (vault / "Visible.md").write_text("# Visible\n\nplatypus electroreception\n")
    follows(live, "platypus", "Visible.md")
    assert live.state.index.manifest.note(".obsidian/Secret.md") is None


def test_a_file_written_slowly_ends_indexed_whole(live):
    vault = live.state.index.vault_root
    path = vault / "Slow.md"

    def write_slowly() -> None:
        with path.open("w", encoding="utf-8") as handle:
            handle.write("# Slow\n\n")
            for i in range(40):  # ~2 s: longer than the debounce and the max delay
                handle.write(f"Line {i} about the slow loris.\n\n")
                handle.flush()
                time.sleep(0.05)
            handle.write("The last line mentions the sloth.\n")

    writer = threading.Thread(target=write_slowly)
    writer.start()
    writer.join()
    follows(live, "sloth", "Slow.md")
    wait_idle(live)
    text = "".join(c.text for c in live.state.index.manifest.note_chunks("Slow.md"))
    assert "Line 39" in text and "sloth" in text


def test_a_file_changing_while_read_is_retried(live, monkeypatch):
    vault = live.state.index.vault_root
    real = sync.read_note_file
    looks: list[str] = []

    def flaky(root: Path, rel: str, known=None, **options):  # the first two reads see it move
        if rel == "Flux.md":
            looks.append(rel)
            if len(looks) <= 2:
                raise FileInFlux(rel)
        return real(root, rel, known, **options)

    monkeypatch.setattr(sync, "read_note_file", flaky)
    (vault / "Flux.md").write_text("# Flux\n\nThe axolotl regrows limbs.\n")
    follows(live, "axolotl regrows", "Flux.md")
    assert len(looks) >= 3
