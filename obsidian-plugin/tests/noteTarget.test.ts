/** `view/noteTarget.ts`: link text, heading subpaths and the cited line as Obsidian opens them. */
import { describe, expect, it } from "vitest";

import { stripHeading } from "../src/resolver/links";
import { hoverCall, linkSubpath, linkTarget, noteTarget, openCall } from "../src/view/noteTarget";

describe("noteTarget", () => {
  it("links to the heading and keeps the cited line, 0-based", () => {
    expect(noteTarget("C++/UObject 与 GC.md", "TObjectPtr", 12)).toEqual({
      linktext: "C++/UObject 与 GC#TObjectPtr",
      notePath: "C++/UObject 与 GC",
      line: 11,
    });
    expect(noteTarget("Top.md", "", 1)).toEqual({ linktext: "Top", notePath: "Top", line: 0 });
    for (const bad of [null, undefined, 0, -3, 2.5]) expect(noteTarget("A.md", "H", bad).line).toBeNull();
  });

  it("makes headings with # | ^ [ ] safe in a link, and still equal to the heading under stripHeading", () => {
    for (const heading of ["C# interop", "A | B", "x^2 [draft]", "#tag heading", "C#  and  F#"]) {
      const subpath = linkSubpath(heading);
      expect(subpath).not.toMatch(/[#|^[\]]/);
      expect(stripHeading(subpath)).toBe(stripHeading(heading));
    }
    expect(linkSubpath("C# interop")).toBe("C interop");
    expect(noteTarget("Lang/CSharp.md", "C# interop", 3).linktext).toBe("Lang/CSharp#C interop");
    // A block id stays a block link.
    expect(noteTarget("A.md", "^abc123", 5).linktext).toBe("A#^abc123");
  });

  it("opens and previews at the line when known, else at the heading", () => {
    const atLine = noteTarget("A/B.md", "H", 8);
    expect(openCall(atLine)).toEqual({ linktext: "A/B", eState: { line: 7 } });
    expect(hoverCall(atLine)).toEqual({ linktext: "A/B", state: { scroll: 7 } });
    const noLine = noteTarget("A/B.md", "H");
    expect(openCall(noLine)).toEqual({ linktext: "A/B#H" });
    expect(hoverCall(noLine)).toEqual({ linktext: "A/B#H" });
    expect(linkTarget("A/B#H")).toEqual({ linktext: "A/B#H", notePath: "A/B", line: null });
  });
});

describe("noteTarget for PDFs and canvases (issue 25)", () => {
  it("opens a PDF citation at its page: `path.pdf#page=N` to openLinkText, no editor line", () => {
    const target = noteTarget("Tools/Perforce Handbook.pdf", "page=2", 1);
    expect(target).toEqual({ linktext: "Tools/Perforce Handbook.pdf#page=2", notePath: "Tools/Perforce Handbook.pdf", line: null });
    expect(openCall(target)).toEqual({ linktext: "Tools/Perforce Handbook.pdf#page=2" });
    expect(hoverCall(target)).toEqual({ linktext: "Tools/Perforce Handbook.pdf#page=2" });
    expect(noteTarget("Papers/A.PDF", "page=13", 40).linktext).toBe("Papers/A.PDF#page=13");
  });

  it("a PDF passage under an outline heading still opens at its page; a canvas opens as the board", () => {
    // Only `page=N` is kept as written; `=` in a Markdown heading is no link breaker either.
    expect(noteTarget("Notes/Eq.md", "a=b", 3).linktext).toBe("Notes/Eq#a=b");
    const board = noteTarget("Tools/Submit Flow.canvas", "", 1);
    expect(board).toEqual({ linktext: "Tools/Submit Flow.canvas", notePath: "Tools/Submit Flow.canvas", line: null });
    expect(openCall(board)).toEqual({ linktext: "Tools/Submit Flow.canvas" });
  });
});
