/** `view/noteContext.ts`: what "Ask about this note" sends, and what the turn says about it. */
import { describe, expect, it } from "vitest";

import { askNote, describeAsking, describeFocus, MAX_SELECTION_CHARS, noteLinks } from "../src/view/noteContext";

const RESOLVED = {
  "A.md": { "B.md": 2, "C/D.md": 1, "img.png": 1, "A.md": 1 },
  "E.md": { "A.md": 1 },
  "F.md": { "B.md": 1 },
  "B.md": { "A.md": 3 },
};

describe("noteLinks", () => {
  it("lists the notes it links to, then those linking to it, each once, never itself or a non-note", () => {
    expect(noteLinks(RESOLVED, "A.md")).toEqual(["B.md", "C/D.md", "E.md"]);
    expect(noteLinks(RESOLVED, "B.md")).toEqual(["A.md", "F.md"]);
    expect(noteLinks(RESOLVED, "Nowhere.md")).toEqual([]);
    expect(noteLinks(RESOLVED, "A.md", 2)).toEqual(["B.md", "C/D.md"]);
  });
});

describe("askNote", () => {
  it("sends the trimmed selection only when there is one, within the sidecar's limits", () => {
    expect(askNote("A.md", "  x  ", ["B.md"])).toEqual({ path: "A.md", selection: "x", links: ["B.md"] });
    expect(askNote("A.md", " \n ", [])).toEqual({ path: "A.md", links: [] });
    expect(askNote("A.md", "y".repeat(MAX_SELECTION_CHARS + 5), []).selection).toHaveLength(MAX_SELECTION_CHARS);
    expect(askNote("A.md", "", Array.from({ length: 1200 }, (_, i) => `${i}.md`)).links).toHaveLength(1000);
  });
});

describe("the turn's line about the note", () => {
  const note = askNote("Rendering/Lumen.md", "", []);
  const focus = { path: "Rendering/Lumen.md", indexed: true, linked: 2, selection: false, cited: 2, cited_linked: 1 };

  it("says which note is used while the answer runs", () => {
    expect(describeAsking(note)).toBe("Using “Lumen”");
    expect(describeAsking(askNote("Rendering/Lumen.md", "sel", []))).toBe("Using “Lumen” and the selection");
  });

  it("says what the answer took from it", () => {
    expect(describeFocus(note, focus)).toBe("Used “Lumen”: 2 sources from it, 1 source from notes it links with");
    expect(describeFocus(note, { ...focus, cited: 1, cited_linked: 0 })).toBe("Used “Lumen”: 1 source from it");
    expect(describeFocus(note, { ...focus, cited: 0, cited_linked: 0 })).toBe("Used “Lumen”, but no source came from it or its links");
    expect(describeFocus(note, { ...focus, indexed: false, cited: 0 })).toBe("“Lumen” is not indexed yet, so the answer comes from the whole vault");
    expect(describeFocus(note, null)).toBe("Asked about “Lumen”"); // an older sidecar without `focus`
  });
});
