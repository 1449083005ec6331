"""Code by symbol: real tree-sitter grammars (the PyPI wheels) on small real samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_rag.chunking.chunker import ChunkOptions
from vault_rag.sources.code.kind import CodeKind, code_units
from vault_rag.sources.code.languages import CPP, PYTHON, parser_for
from vault_rag.vault.links import NoteIndex

OPTIONS = ChunkOptions(target_min=50, target_max=400)

UNREAL_HEADER = """\
#pragma once

#include "CoreMinimal.h"
#include "GameFramework/Actor.h"
#include "MyActor.generated.h"

/** An actor that heals whoever touches it. */
UCLASS(Blueprintable, meta=(DisplayName="Healing Actor"))
class MYGAME_API AHealingActor : public AActor
{
    GENERATED_BODY()

public:
    AHealingActor();

    /** Heal the given actor by Amount points. */
    UFUNCTION(BlueprintCallable, Category="Healing")
    void HealTarget(AActor* Target, float Amount)
    {
        if (Target) { Pending += Amount; }
    }

    UPROPERTY(EditAnywhere, Category="Healing")
    float Pending = 0.f;
};
"""

UNREAL_SOURCE = """\
#include "MyActor.h"

namespace Healing {

// Ticks the healing over time.
void AHealingActor::Tick(float DeltaSeconds)
{
    Super::Tick(DeltaSeconds);
    Pending = FMath::Max(0.f, Pending - DeltaSeconds);
}

struct FHealEvent
{
    float Amount;
};

}  // namespace Healing
"""

PYTHON_SOURCE = '''\
"""A small module."""

import math


class Circle:
    """A circle."""

    def __init__(self, radius: float) -> None:
        self.radius = radius

    @property
    def area(self) -> float:
        """Its area."""
        return math.pi * self.radius**2


# Helper for callers.
def unit_circle() -> Circle:
    return Circle(1.0)
'''


def _units(rel: str, text: str, options: ChunkOptions = OPTIONS):
    return code_units(rel, text, options)


def test_grammars_are_installed_wheels():
    # Each grammar is compiled inside its wheel: a parser is built with no download.
    assert parser_for(CPP) is not None
    assert parser_for(PYTHON) is not None


def test_unreal_class_and_method_with_macros_and_doc():
    units = _units("Source/MyGame/MyActor.h", UNREAL_HEADER)
    by_symbol = {u.extra["symbol"]: u for u in units}
    assert "AHealingActor" in by_symbol, list(by_symbol)
    method = by_symbol["AHealingActor::HealTarget"]
    assert method.hierarchy_path == "Source/MyGame/MyActor.h > AHealingActor > HealTarget"
    assert method.text.splitlines()[0].strip() == "/** Heal the given actor by Amount points. */"
    assert "UFUNCTION(BlueprintCallable" in method.text
    assert method.text.rstrip().endswith("}")
    assert (method.line_start, method.line_end) == (16, 21)
    cls = by_symbol["AHealingActor"]
    assert cls.extra["symbol_kind"] == "class"
    assert cls.text.startswith("/** An actor that heals")
    assert "UCLASS(Blueprintable" in cls.text
    # the method is its own unit: the class shows its signature only
    assert "Pending += Amount" not in cls.text
    assert "void HealTarget(AActor* Target, float Amount) …" in cls.text
    # the includes are a unit of their own lines
    assert any('#include "CoreMinimal.h"' in u.text for u in units if u.extra["symbol"] == "")


def test_out_of_line_method_and_namespace():
    units = _units("Source/MyGame/MyActor.cpp", UNREAL_SOURCE)
    by_symbol = {u.extra["symbol"]: u for u in units}
    tick = by_symbol["Healing::AHealingActor::Tick"]
    assert tick.hierarchy_path.endswith("Healing > AHealingActor > Tick")
    assert tick.text.startswith("// Ticks the healing")
    assert (tick.line_start, tick.line_end) == (5, 10)
    assert by_symbol["Healing::FHealEvent"].extra["symbol_kind"] == "struct"


def test_python_classes_methods_and_decorators():
    units = _units("geometry/circle.py", PYTHON_SOURCE)
    by_symbol = {u.extra["symbol"]: u for u in units}
    area = by_symbol["Circle::area"]
    assert area.text.lstrip().startswith("@property")
    assert '"""Its area."""' in area.text
    assert area.hierarchy_path == "geometry/circle.py > Circle > area"
    helper = by_symbol["unit_circle"]
    assert helper.text.startswith("# Helper for callers.")
    assert (helper.line_start, helper.line_end) == (18, 20)


def test_long_function_is_split_into_parts_that_cover_it():
    body = "\n".join(f"    total += compute_value_{i}(x, y, z);" for i in range(200))
    text = f"int Sum(int x, int y, int z)\n{{\n    int total = 0;\n{body}\n    return total;\n}}\n"
    units = [u for u in _units("src/sum.c", text) if u.extra["symbol"] == "Sum"]
    assert len(units) > 1
    assert units[0].line_start == 1 and units[-1].line_end == 205
    assert all(u.hierarchy_path.startswith("src/sum.c > Sum (part ") for u in units)
    covered = [n for u in units for n in range(u.line_start, u.line_end + 1)]
    assert covered == list(range(1, 206))
    assert len({u.id for u in units}) == len(units)


def test_file_that_does_not_parse_falls_back_to_line_windows():
    text = "this is not { C++ at all ]] (((\n" * 30
    units = _units("src/broken.cpp", text)
    assert units and all(u.extra["symbol_kind"] == "lines" for u in units)
    assert units[0].line_start == 1 and units[-1].line_end == 30


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"int f() { return 0; }\x00\x01\x02", "binary"),
        ("// caf\u00e9\nint f();\n".encode("latin-1"), "unknown_encoding"),
        (b"var a=1;" * 1000, "minified"),
    ],
)
def test_bad_files_are_warnings_not_units(tmp_path: Path, content: bytes, code: str):
    (tmp_path / "file.cpp").write_bytes(content)
    result = CodeKind().units(tmp_path, "file.cpp", NoteIndex([]), OPTIONS)
    assert result.chunks == []
    assert [w.code for w in result.warnings] == [code]


def test_file_over_the_size_limit_is_not_read(tmp_path: Path):
    (tmp_path / "big.cpp").write_bytes(b"int x;\n" * 200_000)  # 1.4 MB
    result = CodeKind(max_kb=1024).units(tmp_path, "big.cpp", NoteIndex([]), OPTIONS)
    assert [w.code for w in result.warnings] == ["too_large"]
    assert "max_code_kb" in result.warnings[0].message


def test_utf16_with_bom_is_read(tmp_path: Path):
    (tmp_path / "wide.h").write_bytes("struct Wide { int a; };\n".encode("utf-16"))
    result = CodeKind().units(tmp_path, "wide.h", NoteIndex([]), OPTIONS)
    assert [u.extra["symbol"] for u in result.chunks] == ["Wide"]


LIMITER_SOURCE = """\
class Limiter {
 public:
  Limiter(int max_acquires)
      :
#if !defined(NDEBUG)
        max_acquires_(max_acquires),
#endif  // !defined(NDEBUG)
        acquires_allowed_(max_acquires) {}

 private:
#if !defined(NDEBUG)
  const int max_acquires_;
#endif
  int acquires_allowed_;
};

class PosixEnv {
 public:
  void Schedule(void (*function)(void*), void* arg) { function(arg); }
};
"""


def test_conditional_lines_inside_an_initializer_list_do_not_break_later_paths():
    """`#if` inside a member-initializer list (LevelDB's util/env_posix.cc) is no C++ to the
    grammar: unblanked, `PosixEnv` came out as `Limiter::PosixEnv`."""
    by_symbol = {u.extra["symbol"]: u for u in _units("util/env.cc", LIMITER_SOURCE)}
    assert "PosixEnv::Schedule" in by_symbol, sorted(by_symbol)
    assert (by_symbol["PosixEnv::Schedule"].line_start, by_symbol["PosixEnv"].line_end) == (19, 20)
    assert "Limiter::Limiter" in by_symbol
    assert "#if !defined(NDEBUG)" in by_symbol["Limiter::Limiter"].text  # the text is the file's
