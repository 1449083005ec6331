"""Code by symbol beyond C/C++/Python: TypeScript/TSX, JavaScript, C#, Go, Java and Rust, each
a small real sample (tests/data/code_samples) read by its real grammar wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.sources.code.kind import code_units
from vault_rag.sources.code.languages import LANGUAGES, parser_for, spec_for
from vault_rag.sources.code.symbols import parse_symbols

SAMPLES = Path(__file__).parent / "data" / "code_samples"
OPTIONS = ChunkOptions(target_min=50, target_max=400)

# file → language, {symbol: kind} that must be units, and one (symbol, first line, last line)
# that shows a unit holds its doc comment, signature and whole body.
CASES = {
    "shapes.ts": (
        "typescript",
        {
            "Shape": "interface",
            "Circle": "class",
            "Circle::area": "function",
            "unit": "function",
            "double": "function",
            "Geo::f": "function",
            "Color": "enum",
        },
        (
            "Circle::area",
            "  /** Its area. */",
            "  area(): number { return Math.PI * this.r ** 2; }",
        ),
    ),
    "Button.tsx": (
        "tsx",
        {"ButtonProps": "interface", "Button": "function"},
        ("Button", "/** A button that shows its label. */", "}"),
    ),
    "counter.js": (
        "javascript",
        {
            "Counter": "class",
            "Counter::increment": "function",
            "Counter::zero": "function",
            "sum": "function",
            "square": "function",
        },
        ("Counter::increment", "  /** Adds one. */", "  }"),
    ),
    "InvoiceCalculator.cs": (
        "csharp",
        {
            "Shop.Billing::InvoiceCalculator": "class",
            "Shop.Billing::InvoiceCalculator::InvoiceCalculator": "function",
            "Shop.Billing::InvoiceCalculator::Total": "function",
            "Shop.Billing::ICalculator": "interface",
            "Shop.Billing::Money": "struct",
        },
        (
            "Shop.Billing::InvoiceCalculator::Total",
            "        /// <summary>The total with tax.</summary>",
            "        }",
        ),
    ),
    "circle.go": (
        "go",
        {"Circle": "struct", "Circle::Area": "function", "Shape": "interface", "Unit": "function"},
        ("Circle::Area", "// Area returns the circle's area.", "}"),
    ),
    "ItemStore.java": (
        "java",
        {
            "ItemStore": "class",
            "ItemStore::ItemStore": "function",
            "ItemStore::add": "function",
            "ItemStore::Entry": "class",
            "Store": "interface",
            "Level": "enum",
        },
        ("ItemStore::add", "    /**", "    }"),
    ),
    "stack.rs": (
        "rust",
        {
            "Stack": "struct",
            "Stack::push": "function",
            "Stack::pop": "function",
            "Stack::fmt": "function",
            "Peek": "trait",
            "util::helper": "function",
            "Shape": "enum",
        },
        ("Stack::push", "    /// Pushes a value on top.", "    }"),
    ),
}


def test_every_grammar_is_an_installed_wheel():
    # Each grammar is compiled inside its PyPI wheel: a parser is built with no download.
    missing = [spec.name for spec in LANGUAGES if parser_for(spec) is None]
    assert missing == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_parses_into_symbol_units(name: str):
    language, expected, (symbol, first, last) = CASES[name]
    text = (SAMPLES / name).read_text(encoding="utf-8")
    spec = spec_for(name)
    assert spec is not None and spec.name == language
    parser = parser_for(spec)
    parsed = parse_symbols(parser, spec, text.encode("utf-8"), text.splitlines())
    assert parsed.errors == 0  # the real grammar reads the sample without error nodes

    units = code_units(f"src/{name}", text, OPTIONS)
    kinds = {u.extra["symbol"]: u.extra["symbol_kind"] for u in units if u.extra["symbol"]}
    assert {s: kinds.get(s) for s in expected} == expected
    assert {u.extra["language"] for u in units} == {language}

    unit = next(u for u in units if u.extra["symbol"] == symbol)
    lines = unit.text.splitlines()
    assert (lines[0], lines[-1]) == (first, last)
    source_lines = text.splitlines()
    assert lines == source_lines[unit.line_start - 1 : unit.line_end]
    # heading path `file > class > method`
    assert unit.hierarchy_path == " > ".join((f"src/{name}", *symbol.split("::")))


def test_class_unit_shows_its_methods_as_signatures_only():
    text = (SAMPLES / "ItemStore.java").read_text(encoding="utf-8")
    units = {u.extra["symbol"]: u for u in code_units("ItemStore.java", text, OPTIONS)}
    cls = units["ItemStore"]
    assert "items.add(item);" not in cls.text  # the method is its own unit
    assert "    public void add(String item) { …" in cls.text
    assert "items.add(item);" in units["ItemStore::add"].text


@pytest.mark.parametrize("suffix", [".ts", ".js", ".cs", ".go", ".java", ".rs"])
def test_text_that_does_not_parse_falls_back_to_line_windows(suffix: str):
    text = "this is not { code at all ]] (((\n" * 30
    units = code_units(f"src/broken{suffix}", text, OPTIONS)
    assert units and all(u.extra["symbol_kind"] == "lines" for u in units)
    assert units[0].line_start == 1 and units[-1].line_end == 30


def test_long_go_function_is_split_into_parts():
    body = "\n".join(f"\ttotal += compute{i}(x)" for i in range(150))
    text = f"package p\n\nfunc Sum(x int) int {{\n\ttotal := 0\n{body}\n\treturn total\n}}\n"
    parts = [u for u in code_units("sum.go", text, OPTIONS) if u.extra["symbol"] == "Sum"]
    assert len(parts) > 1
    assert [u.extra["part"] for u in parts] == list(range(1, len(parts) + 1))
    covered = [n for u in parts for n in range(u.line_start, u.line_end + 1)]
    assert covered == list(range(3, 3 + 150 + 4))
