"""Run the language-neutral embed conformance fixtures (shared-schemas/fixtures/embeds/).

The TypeScript plugin runs the same folders through Obsidian's metadataCache; the format and
comparison rules are in the README there.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from pathlib import Path

import pytest

from vault_rag.vault.embeds import resolve_note
from vault_rag.vault.links import NoteIndex
from vault_rag.vault.types import WARNING_CODES

FIXTURES = Path(__file__).resolve().parent.parent / "shared-schemas" / "fixtures" / "embeds"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "case.json").is_file())
REQUIRED = ("case.json", "expected.md", "expected-warnings.json", "expected-dependencies.json")


def _read(path: Path) -> str:
    # Bytes, not read_text: no newline translation may hide a difference.
    return path.read_bytes().decode("utf-8")


def _diff(expected: str, actual: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        "expected.md",
        "actual",
    )
    return "".join(lines)


def test_suite_has_every_case_complete() -> None:
    assert len(CASES) >= 30
    for name in CASES:
        folder = FIXTURES / name
        for required in REQUIRED:
            assert (folder / required).is_file(), f"{name}: {required} missing"
        case = json.loads(_read(folder / "case.json"))
        assert set(case) == {"note", "description", "rule"}, name
        assert case["note"] in NoteIndex.from_vault(folder / "vault"), f"{name}: note not in vault"


def test_readme_lists_every_case() -> None:
    readme = _read(FIXTURES / "README.md")
    missing = [name for name in CASES if f"`{name}`" not in readme]
    assert not missing, f"cases not documented in README.md: {missing}"


@pytest.mark.parametrize("name", CASES)
def test_fixture(name: str) -> None:
    folder = FIXTURES / name
    case = json.loads(_read(folder / "case.json"))
    vault = folder / "vault"
    resolved = resolve_note(vault, case["note"], NoteIndex.from_vault(vault))

    # Comparison rule: trailing newlines are not significant, everything else is.
    expected = _read(folder / "expected.md").rstrip("\n")
    actual = resolved.text.rstrip("\n")
    if actual != expected:
        pytest.fail(f"{name}: resolved text differs\n{_diff(expected + chr(10), actual + chr(10))}")

    expected_warnings = json.loads(_read(folder / "expected-warnings.json"))
    want = Counter((w["code"], w["target"]) for w in expected_warnings)
    got = Counter((w.code, w.target) for w in resolved.warnings)
    assert got == want, f"{name}: warnings differ: got {sorted(got)}, want {sorted(want)}"
    assert all(code in WARNING_CODES for code, _ in want), f"{name}: unknown warning code"

    deps = json.loads(_read(folder / "expected-dependencies.json"))
    assert deps == sorted(deps), f"{name}: expected-dependencies.json must be sorted"
    assert resolved.dependencies == deps, f"{name}: dependencies {resolved.dependencies} != {deps}"

    # Provenance invariant on every case: spans tile the text exactly, in order.
    position = 0
    for span in resolved.spans:
        assert span.start == position and span.end > span.start
        position = span.end
    assert position == len(resolved.text)
