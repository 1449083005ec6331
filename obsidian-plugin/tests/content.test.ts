/** What sync posts for a note (frontmatter + resolved body), its hash, exclusion, embedders. */
import { createHash } from "node:crypto";

import { describe, expect, it } from "vitest";

import { buildNotePayload, isExcluded, noteContent, sha256Hex } from "../src/sync";
import { EmbedIndex } from "../src/sync";
import { MemoryVault, paragraphNote, pos } from "./helpers/memoryVault";

function withFrontmatter(text: string, fmEndLine: number, embeds: string[]) {
  const note = paragraphNote(text, embeds);
  const lines = text.split("\n");
  note.cache = {
    ...note.cache,
    frontmatterPosition: pos(text, 0, 0, fmEndLine, (lines[fmEndLine] ?? "").length),
    sections: [{ type: "paragraph", position: pos(text, fmEndLine + 1, 0, lines.length - 1, (lines.at(-1) ?? "").length) }],
  };
  return note;
}

describe("note content", () => {
  it("is the frontmatter block as written followed by the resolved body", async () => {
    const text = "---\ntags: [ue]\naliases: [材质]\n---\n材质 ![[Params]] end";
    const vault = new MemoryVault({
      "Rendering/Café.md": withFrontmatter(text, 3, ["![[Params]]"]),
      "Params.md": paragraphNote("Roughness, Metallic", []),
    });
    const file = { ...vault.file("Rendering/Cafe\u0301.md".normalize("NFC")), stat: { mtime: 1_700_000_000_123 } };
    const payload = await buildNotePayload(vault, file);
    expect(payload).toEqual({
      path: "Rendering/Café.md",
      content: "---\ntags: [ue]\naliases: [材质]\n---\n材质 Roughness, Metallic end",
      embeds: ["Params.md"],
      mtime: 1_700_000_000_123,
    });
  });

  it("leaves an embed of a note in an excluded folder as written: its text is never sent", async () => {
    const vault = new MemoryVault({
      "Public/A.md": paragraphNote("see ![[Diary]] and ![[B]]", ["![[Diary]]", "![[B]]"]),
      "Journal/Diary.md": paragraphNote("the narwhal password", []),
      "B.md": paragraphNote("bee", []),
    });
    const file = { ...vault.file("Public/A.md"), stat: { mtime: 1 } };
    const payload = await buildNotePayload(vault, file, { isExcluded: (p) => isExcluded(p, ["Journal"]) });
    expect(payload?.content).toBe("see ![[Diary]] and bee");
    expect(payload?.embeds).toEqual(["B.md"]);
    const open = await buildNotePayload(vault, file);
    expect(open?.content).toBe("see the narwhal password and bee");
  });

  it("is the resolved body alone without frontmatter, and drops CR from frontmatter lines", () => {
    expect(noteContent("plain ![[x]]", {}, "plain X")).toBe("plain X");
    const raw = "---\r\na: 1\r\n---\r\nbody";
    expect(noteContent(raw, { frontmatterPosition: pos(raw, 0, 0, 2, 3) }, "body")).toBe("---\na: 1\n---\nbody");
  });

  it("cannot be built before Obsidian has parsed the note, nor for an unreadable one", async () => {
    const vault = new MemoryVault({ "A.md": { text: "a", cache: null }, "B.md": paragraphNote("b", []) });
    expect(await buildNotePayload(vault, vault.file("A.md"))).toBeNull();
    vault.unreadable.add("B.md");
    expect(await buildNotePayload(vault, vault.file("B.md"))).toBeNull();
  });

  it("is hashed as SHA-256 of its UTF-8 bytes (Python's hashlib.sha256(content.encode()))", async () => {
    for (const text of ["", "a1", "---\ntags: [ue]\n---\n材质 🚀\r\n"]) {
      expect(await sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    }
    const bytes = new TextEncoder().encode("材质");
    expect(await sha256Hex(bytes)).toBe(createHash("sha256").update(bytes).digest("hex"));
  });
});

describe("isExcluded", () => {
  it("matches a folder and everything below it, not a name that only starts alike", () => {
    const folders = ["Private", "/Daily/2024/", " ", "Templates\\Old"];
    expect(isExcluded("Private/a.md", folders)).toBe(true);
    expect(isExcluded("Private", folders)).toBe(true);
    expect(isExcluded("Private notes/a.md", folders)).toBe(false);
    expect(isExcluded("Daily/2024/01.md", folders)).toBe(true);
    expect(isExcluded("Daily/2025/01.md", folders)).toBe(false);
    expect(isExcluded("Templates/Old/t.md", folders)).toBe(true);
    expect(isExcluded("a.md", [])).toBe(false);
  });
});

describe("EmbedIndex (who embeds whom)", () => {
  // A embeds B, B embeds C (at a heading), D has no embeds (only links), E embeds "New" (not created yet).
  function graph() {
    const index = new EmbedIndex();
    index.set("A.md", { resolved: ["B.md"], unresolved: [] });
    index.set("B.md", { resolved: ["C.md"], unresolved: [] });
    index.set("D.md", { resolved: [], unresolved: [] });
    index.set("E.md", { resolved: [], unresolved: ["New"] });
    return index;
  }

  it("follows embeds up the chain, not plain links", () => {
    expect(graph().embedders("C.md").sort()).toEqual(["A.md", "B.md"]);
    expect(graph().embedders("A.md")).toEqual([]);
  });

  it("finds notes waiting for a note that was just created, by name or by path", () => {
    const index = graph();
    expect(index.embedders("New.md")).toEqual(["E.md"]);
    expect(index.embedders("Folder/New.md")).toEqual(["E.md"]);
    index.set("F.md", { resolved: [], unresolved: ["Folder/Other.md"] });
    expect(index.embedders("Folder/Other.md")).toEqual(["F.md"]);
    expect(index.embedders("Elsewhere/Other.md")).toEqual([]);
  });

  it("stops on cycles", () => {
    const index = new EmbedIndex();
    index.set("A.md", { resolved: ["B.md"], unresolved: [] });
    index.set("B.md", { resolved: ["A.md"], unresolved: [] });
    expect(index.embedders("A.md")).toEqual(["B.md"]);
  });

  it("keeps the embedders of a deleted note, and follows a rename", () => {
    const index = graph();
    index.remove("C.md"); // C deleted: B still embeds it until B is re-resolved
    expect(index.embedders("C.md").sort()).toEqual(["A.md", "B.md"]);
    index.rename("B.md", "Moved/B.md");
    expect(index.embedders("C.md").sort()).toEqual(["A.md", "Moved/B.md"]);
    index.remove("Moved/B.md");
    expect(index.embedders("C.md")).toEqual([]);
    expect(index.size).toBe(2);
  });
});
