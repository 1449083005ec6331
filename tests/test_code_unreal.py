"""C++ as Unreal writes it: reflection macros that must not break class and method detection,
and `.h`/`.cpp` pairs whose units know each other (real tree-sitter-cpp, real files on disk,
and a real source index through the CLI)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.cli import app
from vault_rag.index.manifest import Manifest
from vault_rag.sources.code.kind import CodeKind, code_units
from vault_rag.sources.code.languages import CPP, parser_for
from vault_rag.sources.code.pairs import partners
from vault_rag.sources.code.symbols import parse_symbols
from vault_rag.vault.links import NoteIndex

SAMPLES = Path(__file__).parent / "data" / "code_samples" / "unreal"
HEADER = "Source/Lyra/Public/Inventory/InventoryComponent.h"
SOURCE = "Source/Lyra/Private/Inventory/InventoryComponent.cpp"
OPTIONS = ChunkOptions(target_min=50, target_max=400)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, name in ((HEADER, "InventoryComponent.h"), (SOURCE, "InventoryComponent.cpp")):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / name, tmp_path / rel)
    return tmp_path


def test_unreal_header_macros_do_not_break_classes_and_methods():
    text = (SAMPLES / "InventoryComponent.h").read_text(encoding="utf-8")
    parsed = parse_symbols(parser_for(CPP), CPP, text.encode("utf-8"), text.splitlines())
    assert parsed.errors == 0  # UCLASS/USTRUCT/UENUM/UMETA/GENERATED_BODY/LYRA_API read away
    units = {u.extra["symbol"]: u for u in code_units(HEADER, text, OPTIONS)}
    kinds = {s: u.extra["symbol_kind"] for s, u in units.items() if s}
    assert kinds == {
        "EStackRule": "enum",
        "FInventorySlot": "struct",
        "FInventorySlot::IsEmpty": "function",
        "UInventoryComponent": "class",
        "UInventoryComponent::NumSlots": "function",  # FORCEINLINE, defined in the class
    }
    component = units["UInventoryComponent"]
    # the whole class: its doc comment and UCLASS line above it, through its closing brace
    assert component.text.startswith("/**\n * Holds the items a pawn carries")
    assert "UCLASS(ClassGroup = (Inventory)" in component.text
    assert component.text.rstrip().endswith("};")
    assert "\tUFUNCTION(BlueprintCallable, BlueprintAuthorityOnly" in component.text
    assert "FORCEINLINE int32 NumSlots() const { return Slots.Num(); } …" in component.text
    assert units["FInventorySlot"].text.startswith("/** One slot of an inventory. */\nUSTRUCT(")


def test_pair_paths_cover_same_folder_and_public_private():
    assert partners("Source/Lyra/Public/Inv/A.h")[:5] == [
        "Source/Lyra/Public/Inv/A.cpp",
        "Source/Lyra/Public/Inv/A.cc",
        "Source/Lyra/Public/Inv/A.cxx",
        "Source/Lyra/Public/Inv/A.c",
        "Source/Lyra/Private/Inv/A.cpp",
    ]
    assert "Source/Lyra/Public/Inv/A.h" in partners("Source/Lyra/Private/Inv/A.cpp")
    assert "include/lib/a.hpp" in partners("src/lib/a.cc")
    assert partners("src/a.py") == []


def test_definition_in_cpp_knows_its_declaration_in_the_header(tree: Path):
    result = CodeKind().units(tree, SOURCE, NoteIndex([]), OPTIONS)
    units = {u.extra["symbol"]: u for u in result.chunks if u.extra["symbol"]}
    assert result.note.dependencies == [HEADER]
    add = units["UInventoryComponent::AddItem"]
    assert add.hierarchy_path == f"{SOURCE} > UInventoryComponent > AddItem"
    assert add.extra["related_file"] == HEADER
    assert add.extra["declared_at"] == f"{HEADER}:55-57"
    # the header's doc comment and UFUNCTION specifiers are embedded with the .cpp body
    assert "Adds Count of Item to the first slot" in add.embed_text
    assert "UFUNCTION(BlueprintCallable, BlueprintAuthorityOnly" in add.embed_text
    assert "Adds Count" not in add.text  # what is quoted and cited stays the .cpp's own lines
    # Unreal RPC bodies belong to the declared RPC
    for body in ("ServerDropItem_Implementation", "ServerDropItem_Validate"):
        assert units[f"UInventoryComponent::{body}"].extra["declared_at"] == f"{HEADER}:63-64"
    # a definition the header does not declare (from a macro-generated declaration) still pairs
    props = units["UInventoryComponent::GetLifetimeReplicatedProps"]
    assert props.extra["related_file"] == HEADER and "declared_at" not in props.extra


def test_header_units_name_the_source_file(tree: Path):
    result = CodeKind().units(tree, HEADER, NoteIndex([]), OPTIONS)
    assert result.note.dependencies == [SOURCE]
    related = {u.extra.get("related_file") for u in result.chunks if u.extra["symbol"]}
    assert related == {SOURCE}


def test_file_without_partner_records_none(tmp_path: Path):
    (tmp_path / "Lonely.cpp").write_text("int Lonely::F() { return 1; }\n", encoding="utf-8")
    result = CodeKind().units(tmp_path, "Lonely.cpp", NoteIndex([]), OPTIONS)
    assert result.note.dependencies == []
    assert [u.extra.get("related_file") for u in result.chunks] == [None]


def test_editing_the_header_reindexes_the_cpp(tree: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("VAULT_RAG_EMBEDDINGS", "hash")
    monkeypatch.setenv("VAULT_RAG_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nInventory notes.\n", encoding="utf-8")
    repo = tmp_path / "repo"
    shutil.move(tree / "Source", repo / "Source")
    data = tmp_path / "data"
    runner = CliRunner()

    def cli(*args: str) -> None:
        result = runner.invoke(app, [*args, "--vault", str(vault), "--data-dir", str(data)])
        assert result.exit_code == 0, result.output

    def add_item_embed() -> str:
        manifest = Manifest(data / "sources" / "game" / "manifest.sqlite3")
        try:
            chunks = manifest.note_chunks(SOURCE)
        finally:
            manifest.close()
        return next(c.embed_text for c in chunks if c.extra.get("symbol", "").endswith("AddItem"))

    cli("sources", "add", "game", str(repo))
    cli("index")
    assert "first slot that takes it" in add_item_embed()
    header = repo / HEADER
    header.write_text(
        header.read_text(encoding="utf-8").replace(
            "first slot that takes it", "emptiest slot (rebalanced)"
        ),
        encoding="utf-8",
    )
    cli("index")  # only the header changed on disk: the .cpp is re-read as its dependent
    assert "emptiest slot (rebalanced)" in add_item_embed()
