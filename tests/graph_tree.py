"""Shared pieces of the graph tests (no tests here): a small real C/C++ and Python tree with
the faults of issue 43 (call cycles, recursion, a name called 10,000 times by one function
and by `FAN_IN` functions, a name defined in two files, macros hiding declarations, a file
cut halfway), indexed as a code source for real (hash embedder), and a vault whose notes link
to each other and name its symbols."""

from __future__ import annotations

import subprocess
from pathlib import Path

from vault_rag.serving.context import make_indexer, open_index
from vault_rag.settings import Settings, SourceSpec
from vault_rag.source_indexes.collections import index_sources
from vault_rag.source_indexes.specs import save_added

FAN_IN = 600  # functions calling Log() once each
SPAM_CALLS = 10_000  # calls of Log() by Spam()

CORE_H = """\
#pragma once
#include "util.h"
#include <vector>

namespace eng {
class Base {
public:
    virtual void Tick(float dt) { Log(); }
    virtual ~Base() {}
};

/** An actor of the world. */
class Actor : public Base {
public:
    void Tick(float dt) override;
    void Spawn() { Tick(0.f); Helper(); }
};

class Pawn : public Actor {
public:
    void Possess() { this->Spawn(); }
};
}
"""

CORE_CPP = """\
#include "core.h"

namespace eng {
void Actor::Tick(float dt) { Base::Tick(dt); Recurse(3); }

int Recurse(int n) { return n <= 0 ? 0 : Recurse(n - 1); }

void PingA(int n);
void PingB(int n) { if (n) PingA(n - 1); }
void PingA(int n) { if (n) PingB(n - 1); }
}
"""

UTIL_H = "#pragma once\nvoid Log();\nvoid Helper();\n"
UTIL_CPP = '#include "util.h"\n\nvoid Log() {}\n\nvoid Helper() { Log(); }\n'
OTHER_CPP = "// a second Helper: the name is ambiguous across files\nvoid Helper() {}\n"
MACRO_CPP = """\
#include "util.h"
#define DECLARE_HANDLER(name) void name(int code)
#define BEGIN_CLASS(n) class n {
#define END_CLASS };

DECLARE_HANDLER(OnError) { Log(); }

BEGIN_CLASS(Hidden) public: void Inside() { Log(); } END_CLASS

void AfterMacro() { Helper(); }
"""
CUT_CPP = """\
#include "util.h"

void Whole() { Log(); }

void Half() {
    Log();
    if (ready) {
        Helper(
"""

PY_BASE = """\
class Model:
    def save(self):
        return True
"""
PY_MODELS = """\
from .base import Model


class User(Model):
    def save(self):
        self.validate()
        return helper(3)

    def validate(self):
        return True


def helper(n):
    return n if n <= 0 else helper(n - 1)
"""

NOTES = {
    "Engine/Actors.md": (
        "---\ntags: [engine, actors]\n---\n# Actors\n\n"
        "`eng::Actor::Spawn` puts an actor in the world; it calls `Helper`.\n"
        "Recursion lives in `Recurse`. See [[Ticking]] and ![[Glossary]].\n"
    ),
    "Engine/Ticking.md": "# Ticking\n\n`Actor::Tick` runs each frame. Back to [[Actors]].\n",
    "Glossary.md": "# Glossary\n\nTick: one frame of the world.\n",
    "Hub.md": "# Hub\n\n- [[Actors]]\n- [[Ticking]]\n",
    "Hub2.md": "# Hub two\n\n[[Actors]] and [[Ticking]] again, and [[Hub]].\n",
    "Private/Plans.md": "# Plans\n\n`eng::Actor::Spawn` is to be rewritten. See [[Actors]].\n",
}
CANVAS = (
    '{"nodes": [{"id": "a", "type": "text", "text": "The tick loop", "x": 0, "y": 0, '
    '"width": 200, "height": 60}, {"id": "b", "type": "file", "file": "Engine/Ticking.md", '
    '"x": 300, "y": 0, "width": 200, "height": 60}], "edges": [{"id": "e", "fromNode": "a", '
    '"toNode": "b"}]}'
)


def write_tree(repo: Path) -> None:
    files = {
        "src/core.h": CORE_H,
        "src/core.cpp": CORE_CPP,
        "src/util.h": UTIL_H,
        "src/util.cpp": UTIL_CPP,
        "src/other.cpp": OTHER_CPP,
        "src/macro.cpp": MACRO_CPP,
        "src/macro2.cpp": MACRO_CPP.replace(
            "BEGIN_CLASS(Hidden) public: void Inside() { Log(); } END_CLASS\n", ""
        ),
        "src/cut.cpp": CUT_CPP,
        # an export macro before the class name; a class inside a function body
        "src/export.h": '#include "core.h"\n\nclass ENG_EXPORT Widget : public eng::Base {\n'
        "public:\n    void Draw() {}\n};\n\nvoid MakeLocal() {\n"
        "    struct Local : public eng::Base {};\n}\n",
        "src/spam.cpp": '#include "util.h"\n\nvoid Spam() {\n'
        + "    Log();\n" * SPAM_CALLS
        + "}\n",
        "src/fanin.cpp": '#include "util.h"\n\n'
        + "".join(f"void Caller{i}() {{ Log(); }}\n" for i in range(FAN_IN)),
        "py/app/__init__.py": "",
        "py/app/base.py": PY_BASE,
        "py/app/models.py": PY_MODELS,
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)


def write_notes(vault: Path) -> None:
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    (vault / "Board.canvas").write_text(CANVAS, encoding="utf-8")


SETTINGS = {
    "embeddings": "hash",
    "exclude": ["Private"],
    "llm_model": None,
    "tavily_api_key": None,
    "server_watch": False,
    "max_code_kb": 2048,
}


def build(root: Path, vault: Path | None = None) -> tuple[Settings, Path, Path]:
    """(settings, vault, repo): the vault (given, or the notes above) and the tree, indexed."""
    if vault is None:
        vault = root / "vault"
        vault.mkdir()
        write_notes(vault)
    repo = root / "repo"
    repo.mkdir()
    write_tree(repo)
    data = root / "data"
    save_added(data, [SourceSpec(name="engine", path=repo, kind="code")])
    settings = Settings(vault=vault, data_dir=data, **SETTINGS)
    index_all(settings)
    return settings, vault, repo


def index_all(settings: Settings) -> None:
    index = open_index(settings)
    try:
        make_indexer(settings, index).run()
        runs = index_sources(settings, index.provider)
    finally:
        index.close()
    assert [(r.name, r.error) for r in runs] == [("engine", None)]
