#!/usr/bin/env bash
# Install everything the tests need from scratch, then run every test.
# Used by the README's test command and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
python -m pip install --quiet -e '.[test]'

echo "== ruff"
ruff check sidecar tests scripts
ruff format --check sidecar tests scripts

echo "== fixtures: cached metadata matches the fixture vaults"
python scripts/gen_cached_metadata.py --check

echo "== pytest"
pytest -q "$@"

if [ -f obsidian-plugin/package.json ]; then
  echo "== plugin"
  npm --prefix obsidian-plugin ci --no-audit --no-fund
  npm --prefix obsidian-plugin test
fi
