"""The synthetic vault generator (scripts/gen_vault.py): determinism and the shape of its notes,
checked with the project's own frontmatter parser and embed resolver."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from vault_rag.vault.embeds import resolve_note
from vault_rag.vault.frontmatter import split_frontmatter
from vault_rag.vault.links import NoteIndex

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gen_vault.py"
_spec = importlib.util.spec_from_file_location("gen_vault", SCRIPT)
assert _spec and _spec.loader
gen_vault = importlib.util.module_from_spec(_spec)
sys.modules["gen_vault"] = gen_vault  # dataclasses look their module up by name
_spec.loader.exec_module(gen_vault)

_EMBED = re.compile(r"!\[\[([^\]|#]+)#([^\]|]+)\]\]")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory):
    return gen_vault.generate_vault(tmp_path_factory.mktemp("v") / "vault", 200, seed=7)


def test_same_seed_gives_identical_bytes_and_another_seed_differs(small, tmp_path: Path):
    again = gen_vault.generate_vault(tmp_path / "again", 200, seed=7)
    other = gen_vault.generate_vault(tmp_path / "other", 200, seed=8)
    first = _files(small.root)
    assert len(first) == 200
    assert _files(again.root) == first
    assert again.hubs == small.hubs
    assert _files(other.root) != first


def _outside_code(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def test_notes_are_shaped_like_real_vaults(small):
    files = {path: data.decode("utf-8") for path, data in _files(small.root).items()}
    depths = Counter(path.count("/") for path in files)
    assert depths[0] < len(files) and max(depths) >= 2  # nested folders
    levels: Counter[int] = Counter()
    tags = aliases = code = nested_items = block_ids = links = zh = en = 0
    for path, text in files.items():
        meta, body, _start, warnings = split_frontmatter(text, path)
        assert warnings == [], path
        tags += bool(meta.get("tags"))
        aliases += bool(meta.get("aliases"))
        assert all(isinstance(a, str) for a in meta.get("aliases", [])), path
        code += body.count("```") // 2
        lines = _outside_code(body)
        for line in lines:
            if m := re.match(r"(#{1,6}) \S", line):
                levels[len(m.group(1))] += 1
        nested_items += sum(1 for line in lines if re.match(r" {2,}- \S", line))
        block_ids += sum(1 for line in lines if re.search(r" \^[0-9a-f]{6}$", line))
        links += len(re.findall(r"(?<!!)\[\[[^\]]+\]\]", body))
        if len(_HAN.findall(body)) > len(body) / 4:
            zh += 1
        else:
            en += 1
    assert set(levels) == {1, 2, 3, 4}
    assert tags > 100 and aliases > 50 and code > 50 and nested_items > 100
    assert block_ids > 50 and links > 200
    assert zh > 50 and en > 30  # Chinese and English notes


def test_every_embed_resolves_and_hubs_are_embedded(small):
    index = NoteIndex.from_vault(small.root)
    embedders = [p for p, data in _files(small.root).items() if b"![[" in data]
    assert sorted(embedders) == sorted(small.embedders)
    assert len(embedders) == 10  # 5 % of 200
    kinds = Counter()
    for path in embedders:
        text = (small.root / path).read_text(encoding="utf-8")
        for _target, sub in _EMBED.findall(text):
            kinds["block" if sub.startswith("^") else "heading"] += 1
        resolved = resolve_note(small.root, path, index)
        assert resolved.warnings == [], (path, resolved.warnings)
        assert "![[" not in resolved.text, path
        assert resolved.dependencies, path
    assert kinds["block"] and kinds["heading"]
    ((hub, users),) = small.hubs.items()
    heading, block = small.hub_section[hub]
    hub_text = (small.root / hub).read_text(encoding="utf-8")
    assert f"## {heading}\n" in hub_text and hub_text.count(f" ^{block}\n") == 1
    assert sorted(users) == sorted(embedders)
    for path in users:
        assert hub in resolve_note(small.root, path, index).dependencies


def test_large_vaults_have_hubs_embedded_by_fifty_notes(tmp_path: Path):
    vault = gen_vault.generate_vault(tmp_path / "v", 1000, seed=1)
    assert len(vault.embedders) == 50
    counts = Counter()
    for path in vault.embedders:
        text = (vault.root / path).read_text(encoding="utf-8")
        for target, _sub in _EMBED.findall(text):
            counts[target] += 1
    titles = {Path(hub).stem for hub in vault.hubs}
    assert titles and all(counts[t] >= 50 for t in titles)
    index = NoteIndex.from_vault(vault.root)
    for path in vault.embedders[:10]:
        assert resolve_note(vault.root, path, index).warnings == []


def test_cli_refuses_a_non_empty_folder_and_writes_an_empty_one(tmp_path: Path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.md").write_text("keep me", encoding="utf-8")
    cmd = [sys.executable, str(SCRIPT)]
    refused = subprocess.run([*cmd, str(tmp_path / "full")], capture_output=True, text=True)
    assert refused.returncode == 2 and "not empty" in refused.stderr
    assert (tmp_path / "full" / "x.md").read_text(encoding="utf-8") == "keep me"
    done = subprocess.run(
        [*cmd, str(tmp_path / "new"), "--notes", "30", "--seed", "3"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "new").rglob("*.md"))) == 30
