"""Check out the code project a code question set is about, declare it as a source beside its
notes vault, and run `vault-rag eval` on it (issue 27; docs/retrieval.md, "Code sources").

The project is not part of this repository (nor needed by CI): each line of the set names it
as `"project": "https://github.com/OWNER/NAME@COMMIT"`. It is checked out at that commit into
`--checkout` (default: a folder under the system temp dir) with `git clone`, or from a local
git mirror with `--mirror GIT_DIR` (`git archive`, no network). The source is named after the
repository (`leveldb`, `zlib`: the prefix of the sets' gold) unless `--source-name` says
otherwise. The notes vault of the mixed set is `tests/data/leveldb_notes/`; the held-out zlib
set is run beside the sample vault (`--vault sidecar/vault_rag/sample_vault`).

    python scripts/code_eval.py tests/data/qa/code-leveldb.jsonl tests/data/qa/mixed-leveldb.jsonl \
        --data-dir DATA/leveldb [--mirror /path/to/leveldb.git] [-- --collection leveldb --json]

Arguments after `--` go to `vault-rag eval` as they are.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTES_VAULT = ROOT / "tests" / "data" / "leveldb_notes"


def project_of(qa_files: list[Path]) -> tuple[str, str]:
    """(repository URL, commit) named by every line of the sets; they must agree."""
    found = set()
    for file in qa_files:
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.add(json.loads(line).get("project", ""))
    if len(found) != 1 or "@" not in next(iter(found)):
        sys.exit(f"the sets must all name one project as URL@COMMIT, found {sorted(found)}")
    url, commit = next(iter(found)).rsplit("@", 1)
    return url, commit


def check_out(url: str, commit: str, folder: Path, mirror: Path | None) -> None:
    """The tree at `commit` in `folder` (left alone when it is already there)."""
    marker = folder / ".vault-rag-commit"
    if marker.is_file() and marker.read_text().strip() == commit:
        return
    folder.mkdir(parents=True, exist_ok=True)
    if mirror is not None:
        archive = subprocess.run(
            ["git", "--git-dir", str(mirror), "archive", commit],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    else:
        subprocess.run(["git", "clone", "--quiet", url, str(folder)], check=True)
        subprocess.run(["git", "-C", str(folder), "checkout", "--quiet", commit], check=True)
    marker.write_text(commit + "\n")


def main() -> None:
    argv = sys.argv[1:]
    passthrough = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qa", type=Path, nargs="+")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--checkout", type=Path)
    parser.add_argument("--mirror", type=Path, help="a local git dir of the project")
    parser.add_argument("--vault", type=Path, default=NOTES_VAULT)
    parser.add_argument("--source-name", help="default: the repository's name")
    args = parser.parse_args(own)
    url, commit = project_of(args.qa)
    source_name = args.source_name or url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    folder = args.checkout or Path(tempfile.gettempdir()) / f"vault-rag-{source_name}-{commit[:10]}"
    check_out(url, commit, folder, args.mirror)
    cli = [sys.executable, "-m", "vault_rag"]
    where = ["--vault", str(args.vault), "--data-dir", str(args.data_dir)]
    listed = subprocess.run(
        [*cli, "sources", "list", *where, "--json"], check=True, text=True, capture_output=True
    ).stdout
    if not any(s["name"] == source_name for s in json.loads(listed)):
        subprocess.run([*cli, "sources", "add", source_name, str(folder), *where], check=True)
    command = [*cli, "eval", *map(str, args.qa), *where, *passthrough]
    sys.exit(subprocess.run(command).returncode)


if __name__ == "__main__":
    main()
