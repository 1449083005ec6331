/** `view/examples.ts`: example questions for the empty pane from the vault's own headings. */
import { describe, expect, it } from "vitest";

import { exampleQuestions, goodHeading, plainHeading, questionFor } from "../src/view/examples";

const note = (path: string, mtime: number, ...headings: [string, number][]) => ({
  path,
  mtime,
  headings: headings.map(([heading, level]) => ({ heading, level })),
});

describe("example questions", () => {
  it("take the first good section heading of each of the newest notes, in its language", () => {
    const notes = [
      note("Old.md", 1, ["Old note", 1], ["Ancient history", 2]),
      note("C++/UObject 与 GC.md", 30, ["UObject 与 GC", 1], ["TODO", 2], ["**UPROPERTY** 与引用", 2]),
      note("Rendering/Lumen.md", 20, ["Lumen", 1], ["Hardware ray tracing", 2], ["Software tracing", 2]),
      note("Daily/2024-05-10.md", 40, ["2024-05-10", 1]),
      note("Tools/Insights.md", 10, ["Unreal Insights", 1]),
    ];
    expect(exampleQuestions(notes)).toEqual([
      { question: "笔记里关于「UPROPERTY 与引用」写了什么？", path: "C++/UObject 与 GC.md", heading: "UPROPERTY 与引用" },
      { question: "What do my notes say about Hardware ray tracing?", path: "Rendering/Lumen.md", heading: "Hardware ray tracing" },
      { question: "What do my notes say about Unreal Insights?", path: "Tools/Insights.md", heading: "Unreal Insights" },
    ]);
    expect(exampleQuestions(notes, 1)).toHaveLength(1);
    expect(exampleQuestions([])).toEqual([]);
  });

  it("skip dates, generic words, single characters, sentences and repeats", () => {
    for (const bad of ["2024-05-10", "TODO", "References", "总结", "X", "12.3", "This heading is a whole long sentence about many different things"]) {
      expect(goodHeading(plainHeading(bad)), bad).toBe(false);
    }
    for (const good of ["Enhanced Input", "材质", "Soft References and Async Loading"]) expect(goodHeading(good), good).toBe(true);
    const same = [note("A.md", 2, ["Lumen GI", 2]), note("B.md", 1, ["lumen gi", 2], ["Nanite", 2])];
    expect(exampleQuestions(same).map((e) => e.heading)).toEqual(["Lumen GI", "Nanite"]);
  });

  it("read headings as plain text", () => {
    expect(plainHeading("[[Lumen|Lumen GI]] and `r.Lumen` **tuning**:")).toBe("Lumen GI and r.Lumen tuning");
    expect(plainHeading("[Docs](https://x) 要点？")).toBe("Docs 要点");
    expect(questionFor("蓝图")).toBe("笔记里关于「蓝图」写了什么？");
  });
});
