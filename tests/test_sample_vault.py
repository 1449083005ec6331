"""The bundled sample vault: packaged, clean UTF-8/LF, and every embed points somewhere real.

The embed check here is deliberately independent of the vault resolver: note names come from
the file system, headings and block ids from markdown-it-py tokens, so a resolver bug cannot
hide a broken sample vault (or the other way round).
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

# The one embed that is broken on purpose (its heading was "renamed"), so demos show a warning.
DELIBERATE_BROKEN = ("Daily/2024-05-14.md", "Actor 生命周期#Destroyed 回调")
# Media embeds whose files are intentionally absent.
EXPECTED_MEDIA = {"actor-lifecycle-diagram.png"}

WIKILINK = re.compile(r"(!?)\[\[([^\[\]]+?)\]\]")
MD = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)


@dataclass(frozen=True)
class Ref:
    source: str  # vault-relative path of the note containing the link
    target: str  # raw text between [[ and ]]
    embed: bool

    @property
    def link(self) -> str:
        return self.target.split("|", 1)[0].strip()

    @property
    def note_part(self) -> str:
        return self.link.split("#", 1)[0].strip()

    @property
    def subpath(self) -> list[str]:
        parts = self.link.split("#")[1:]
        return [p.strip() for p in parts if p.strip()]


@pytest.fixture(scope="module")
def vault() -> Iterator[Path]:
    resource = importlib.resources.files("vault_rag") / "sample_vault"
    with ExitStack() as stack:
        yield Path(stack.enter_context(importlib.resources.as_file(resource)))


@pytest.fixture(scope="module")
def notes(vault: Path) -> dict[str, str]:
    """vault-relative path -> text, for every note."""
    return {
        p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(vault.rglob("*.md"))
    }


@pytest.fixture(scope="module")
def tokens(notes: dict[str, str]) -> dict[str, list[Token]]:
    return {path: MD.parse(text) for path, text in notes.items()}


def prose_texts(toks: list[Token]) -> Iterator[str]:
    """Text of every inline run outside code: code spans and fences are not prose."""
    for tok in toks:
        if tok.type != "inline" or tok.children is None:
            continue
        run: list[str] = []
        for child in tok.children:
            if child.type == "text":
                run.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                run.append("\n")
            else:  # code_inline, emphasis markers, ...: a boundary a wikilink cannot cross
                yield "".join(run)
                run = []
        yield "".join(run)


def refs_of(path: str, toks: list[Token]) -> list[Ref]:
    return [
        Ref(path, m.group(2), embed=m.group(1) == "!")
        for text in prose_texts(toks)
        for m in WIKILINK.finditer(text)
    ]


def headings_of(toks: list[Token]) -> list[tuple[int, str]]:
    out = []
    for i, tok in enumerate(toks):
        if tok.type == "heading_open":
            out.append((int(tok.tag[1]), toks[i + 1].content.strip()))
    return out


def has_heading_path(headings: list[tuple[int, str]], path: list[str]) -> bool:
    """`A#B#C`: B is a heading inside A's section, C inside B's."""

    def search(start: int, end: int, parts: list[str]) -> bool:
        if not parts:
            return True
        for i in range(start, end):
            level, text = headings[i]
            if text != parts[0]:
                continue
            section_end = next((j for j in range(i + 1, end) if headings[j][0] <= level), end)
            if search(i + 1, section_end, parts[1:]):
                return True
        return False

    return search(0, len(headings), path)


def has_block_id(toks: list[Token], block_id: str) -> bool:
    pattern = re.compile(r"(?:^|\s)\^" + re.escape(block_id) + r"$")
    return any(pattern.search(tok.content.strip()) for tok in toks if tok.type == "inline")


def resolve_note(ref: Ref, notes: dict[str, str]) -> str | None:
    name = ref.note_part
    if not name:
        return ref.source
    if "/" in name:
        wanted = name if name.lower().endswith(".md") else name + ".md"
        return wanted if wanted in notes else None
    matches = [p for p in notes if p.rsplit("/", 1)[-1][:-3] == name]
    assert len(matches) <= 1, f"ambiguous note name {name!r}: {matches}"
    return matches[0] if matches else None


def is_media(ref: Ref) -> bool:
    suffix = Path(ref.note_part).suffix.lower()
    return bool(suffix) and suffix != ".md"


def problem(ref: Ref, notes: dict[str, str], tokens: dict[str, list[Token]]) -> str | None:
    target = resolve_note(ref, notes)
    if target is None:
        return "missing_note"
    sub = ref.subpath
    if sub and sub[0].startswith("^"):
        return None if has_block_id(tokens[target], sub[0][1:]) else "missing_block"
    if sub and not has_heading_path(headings_of(tokens[target]), sub):
        return "missing_heading"
    return None


@pytest.fixture(scope="module")
def all_refs(tokens: dict[str, list[Token]]) -> list[Ref]:
    return [ref for path, toks in tokens.items() for ref in refs_of(path, toks)]


def test_sample_vault_is_packaged(vault: Path, notes: dict[str, str]) -> None:
    assert vault.is_dir()
    assert len(notes) >= 20
    folders = {p.split("/")[0] for p in notes if "/" in p}
    assert {"Gameplay", "Rendering", "C++", "Daily"} <= folders
    assert "欢迎 Welcome.md" in notes
    assert not (vault / "README.md").exists(), "a README would be indexed as a note"
    # A wheel carries the PDF and the canvas too (package data is listed by pattern).
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["vault_rag"]
    packaged = {pat.removeprefix("sample_vault/**/*") for pat in patterns if "sample_vault" in pat}
    shipped = {p.suffix for p in vault.rglob("*") if p.is_file()}
    assert shipped == {".md", ".pdf", ".canvas"} and shipped <= packaged


def test_notes_are_utf8_with_lf_endings(vault: Path) -> None:
    for path in sorted(vault.rglob("*.md")):
        data = path.read_bytes()
        data.decode("utf-8")  # strict: raises on invalid bytes
        assert not data.startswith(b"\xef\xbb\xbf"), f"{path.name} has a BOM"
        assert b"\r" not in data, f"{path.name} has CR line endings"
        assert data.endswith(b"\n"), f"{path.name} does not end with a newline"


def test_frontmatter_variety(notes: dict[str, str], tokens: dict[str, list[Token]]) -> None:
    frontmatters = {}
    for path, toks in tokens.items():
        fm = [t for t in toks if t.type == "front_matter"]
        if fm:
            data = yaml.safe_load(fm[0].content)
            assert isinstance(data, dict), path
            frontmatters[path] = data
    without = set(notes) - set(frontmatters)
    assert without, "at least one note has no frontmatter"
    assert len(frontmatters) >= len(notes) * 2 // 3
    tag_kinds = {type(fm.get("tags")).__name__ for fm in frontmatters.values()}
    assert {"list", "str"} <= tag_kinds
    aliases = [a for fm in frontmatters.values() for a in (fm.get("aliases") or [])]
    assert any(re.search(r"[\u4e00-\u9fff]", str(a)) for a in aliases)
    assert all("created" in fm for fm in frontmatters.values())


def test_every_embed_resolves_except_the_deliberate_one(
    all_refs: list[Ref], notes: dict[str, str], tokens: dict[str, list[Token]]
) -> None:
    broken = [
        (ref.source, ref.target, problem(ref, notes, tokens))
        for ref in all_refs
        if ref.embed and not is_media(ref) and problem(ref, notes, tokens)
    ]
    assert broken == [(*DELIBERATE_BROKEN, "missing_heading")]


def test_every_plain_link_resolves(
    all_refs: list[Ref], notes: dict[str, str], tokens: dict[str, list[Token]]
) -> None:
    broken = [
        (ref.source, ref.target, problem(ref, notes, tokens))
        for ref in all_refs
        if not ref.embed and problem(ref, notes, tokens)
    ]
    assert broken == []


def test_media_embeds_are_the_expected_missing_files(vault: Path, all_refs: list[Ref]) -> None:
    media = {ref.note_part for ref in all_refs if ref.embed and is_media(ref)}
    assert media == EXPECTED_MEDIA
    assert not any(vault.rglob("*.png"))


def test_code_is_not_scanned_for_embeds(all_refs: list[Ref], notes: dict[str, str]) -> None:
    # The welcome note quotes the broken embed inside backticks and shows embed syntax in a
    # fence; neither may count as an embed.
    welcome = notes["欢迎 Welcome.md"]
    assert "`![[Actor 生命周期#Destroyed 回调]]`" in welcome
    assert "```markdown\n![[" in welcome
    assert not [r for r in all_refs if r.source == "欢迎 Welcome.md" and r.embed]
    # Pitfalls has real embeds AND embed syntax in a code span; it is itself embedded by the MOC
    pitfalls = notes["踩坑记录 Pitfalls.md"]
    assert "`![[UObject 与 GC#^gc-pitfall]]`" in pitfalls
    assert pitfalls.count("![[UObject 与 GC#^gc-pitfall]]") == 2
    real = [r.target for r in all_refs if r.source == "踩坑记录 Pitfalls.md" and r.embed]
    assert real.count("UObject 与 GC#^gc-pitfall") == 1


def test_every_embed_form_is_present(all_refs: list[Ref], notes: dict[str, str]) -> None:
    embeds = {(r.source, r.target) for r in all_refs if r.embed}
    expected = {
        # whole note, which itself embeds others (two levels)
        ("最佳实践 MOC.md", "踩坑记录 Pitfalls"),
        # whole English note
        ("C++/Blueprint and C++ Communication.md", "Delegates Cheatsheet"),
        # single heading (Chinese heading in a Chinese-named note) with an |alias
        ("最佳实践 MOC.md", "材质系统#材质参数|材质参数速查"),
        ("Rendering/Niagara 入门.md", "材质系统#动态材质实例"),
        # nested headings; 调用顺序 exists under both BeginPlay and EndPlay
        ("踩坑记录 Pitfalls.md", "Actor 生命周期#BeginPlay#调用顺序"),
        ("Daily/2024-05-14.md", "Actor 生命周期#EndPlay#调用顺序"),
        ("Daily/2024-05-10.md", "性能分析#Unreal Insights#启动参数"),
        # block ids: paragraph, list item, whole table, whole list
        ("踩坑记录 Pitfalls.md", "UObject 与 GC#^gc-pitfall"),
        ("踩坑记录 Pitfalls.md", "Packaging and Cooking Errors#^cook-missing-asset"),
        ("踩坑记录 Pitfalls.md", "Components 与碰撞#^collision-table"),
        ("最佳实践 MOC.md", "性能分析#^stat-commands"),
        # note in a nested subfolder, by name only and by path
        ("C++/UObject 与 GC.md", "UPROPERTY 说明符#常用说明符"),
        ("C++/Blueprint and C++ Communication.md", "C++/Macros/UPROPERTY 说明符#Meta 说明符"),
        # media
        ("Gameplay/Actor 生命周期.md", "actor-lifecycle-diagram.png"),
        DELIBERATE_BROKEN,
    }
    assert expected <= embeds, expected - embeds
    # the whole-note embed really is two levels deep
    assert any(r.embed for r in all_refs if r.source == "踩坑记录 Pitfalls.md")
    # the block ids sit where the forms say they do
    assert "\n\n^collision-table\n" in notes["Gameplay/Components 与碰撞.md"]
    assert "\n\n^stat-commands\n" in notes["Tools/性能分析.md"]
    assert re.search(
        r"^- .+ \^cook-missing-asset$", notes["Tools/Packaging and Cooking Errors.md"], re.M
    )


def test_checker_catches_broken_targets(
    notes: dict[str, str], tokens: dict[str, list[Token]]
) -> None:
    """The independent checker itself must be able to fail."""
    cases = {
        "Actor 生命周期#EndPlay#Tick Group": "missing_heading",  # exists, but not under EndPlay
        "Actor 生命周期#Nope": "missing_heading",
        "UObject 与 GC#^no-such-block": "missing_block",
        "No Such Note": "missing_note",
        "Gameplay/UObject 与 GC": "missing_note",  # wrong folder
    }
    for target, code in cases.items():
        assert problem(Ref("x.md", target, embed=True), notes, tokens) == code, target
    fenced = MD.parse("```\n![[No Such Note]]\n```\n\n`![[No Such Note]]`\n")
    assert refs_of("x.md", fenced) == []


QUESTIONS = Path(__file__).resolve().parent / "data" / "sample_questions.yaml"


def note_language(text: str) -> str:
    """ "zh" when CJK characters outnumber Latin words, else "en"."""
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    words = len(re.findall(r"[A-Za-z]+", text))
    return "zh" if cjk > words else "en"


def test_sample_questions_point_at_real_notes(notes: dict[str, str]) -> None:
    questions = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    assert isinstance(questions, list)
    assert len(questions) >= 24
    for q in questions:
        assert set(q) == {"question", "expected_note", "lang", "kind"}, q
        assert q["expected_note"] in notes, q
        assert q["lang"] in ("zh", "en"), q
        assert q["kind"] in ("direct", "paraphrase", "cross-lingual"), q
        has_cjk = bool(re.search(r"[\u4e00-\u9fff]", q["question"]))
        assert has_cjk == (q["lang"] == "zh"), q
        same_language = note_language(notes[q["expected_note"]]) == q["lang"]
        assert same_language == (q["kind"] != "cross-lingual"), q
    langs = [q["lang"] for q in questions]
    assert min(langs.count("zh"), langs.count("en")) >= len(questions) // 3
    kinds = [q["kind"] for q in questions]
    assert kinds.count("paraphrase") >= len(questions) / 3
    assert kinds.count("cross-lingual") >= 3
    texts = [q["question"] for q in questions]
    assert len(set(texts)) == len(texts)


# -- the PDF and the canvas (issue 25) ----------------------------------------------------------
SAMPLE_PDF = "Tools/Perforce Handbook.pdf"
SAMPLE_CANVAS = "Tools/Submit Flow.canvas"


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_the_sample_pdf_is_what_its_script_writes(vault: Path) -> None:
    """The committed PDF is scripts/sample_vault_pdf.py's output: the sidecar's reader gives
    every page exactly that page's paragraphs (compared without white space: lines wrap), with
    an outline entry each. Read as the indexer reads it (`read_pdf`), so the check holds on a
    machine without CJK fonts too: page 2 ends with a lone `。` line that PDFium dropped there
    before the fallback font (issue 40; tests/test_pdf_fonts.py). Rebuilt byte for byte it is
    the same file (reportlab's invariant mode)."""
    import importlib.util

    from vault_rag.sources.pdf_text import read_pdf

    spec = importlib.util.spec_from_file_location(
        "sample_vault_pdf", Path(__file__).parent.parent / "scripts" / "sample_vault_pdf.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    pdf = read_pdf(vault / SAMPLE_PDF, max_mb=1, max_pages=10)
    assert len(pdf.pages) == len(script.PAGES)
    for number, (_outline, paragraphs) in enumerate(script.PAGES):
        expected = "".join(p.removeprefix("# ") for p in paragraphs)
        assert _squeeze(pdf.pages[number]) == _squeeze(expected), f"page {number + 1}"
    assert [entry.title for entry in pdf.outline] == [outline for outline, _ in script.PAGES]
    assert [entry.page for entry in pdf.outline] == [1, 2, 3, 4]
    assert (vault / SAMPLE_PDF).stat().st_size < 16_000  # tiny


def test_the_sample_pdf_rebuilds_to_the_same_bytes(vault: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "again.pdf"
    script = Path(__file__).parent.parent / "scripts" / "sample_vault_pdf.py"
    subprocess.run([sys.executable, str(script), str(out)], check=True, capture_output=True)
    assert out.read_bytes() == (vault / SAMPLE_PDF).read_bytes()


def test_the_sample_canvas_follows_json_canvas_and_points_at_real_files(vault: Path) -> None:
    import json

    board = json.loads((vault / SAMPLE_CANVAS).read_text(encoding="utf-8"))
    nodes = {n["id"]: n for n in board["nodes"]}
    assert {n["type"] for n in nodes.values()} == {"group", "text", "file"}
    for node in nodes.values():
        assert {"id", "type", "x", "y", "width", "height"} <= set(node)
        if node["type"] == "file":
            assert (vault / node["file"]).is_file(), node["file"]
    for edge in board["edges"]:
        assert edge["fromNode"] in nodes and edge["toNode"] in nodes
    assert any(nodes[e["toNode"]]["type"] == "file" for e in board["edges"])


def test_the_sample_vault_cites_its_pdf_to_the_page(vault: Path, tmp_path: Path) -> None:
    """Indexed with the defaults (md, pdf, canvas; hash embeddings, so BM25 decides): the demo's
    PDF question finds page 2 of the PDF, and the canvas is indexed with its group labels."""
    from vault_rag.cli.demo import DEMO_PDF_QUESTION
    from vault_rag.embeddings.hashing import HashProvider
    from vault_rag.index.updates.indexer import Indexer
    from vault_rag.index.vault_index import VaultIndex
    from vault_rag.retrieval.hybrid import SearchOptions, hybrid_search
    from vault_rag.settings import Settings
    from vault_rag.sources.registry import source_registry

    index = VaultIndex(vault, tmp_path / "data", HashProvider())
    try:
        summary = Indexer(index, sources=source_registry(Settings.model_construct())).run()
        assert summary.notes_seen == len(list(vault.rglob("*.md"))) + 2
        hits = hybrid_search(index, DEMO_PDF_QUESTION, SearchOptions(k=5))
        pdf_hits = [h for h in hits if h.note_path == SAMPLE_PDF]
        assert pdf_hits and (pdf_hits[0].page, pdf_hits[0].anchor) == (2, "page=2")
        board = index.manifest.note_chunks(SAMPLE_CANVAS)
        assert any(c.hierarchy_path.startswith("每天开始") for c in board)
    finally:
        index.close()
