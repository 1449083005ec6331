/** What sync posts for a note (frontmatter + resolved body), its hash, exclusion, embedders. */
import { createHash } from "node:crypto";

import { describe, expect, it } from "vitest";

import { buildNotePayload, findEmbedders, isExcluded, noteContent, sha256Hex } from "../src/sync";
import type { EmbedGraph } from "../src/sync";
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

describe("findEmbedders", () => {
  // A embeds B, B embeds C#Heading, D only links to C, E embeds "New" (not created yet).
  const embeds: Record<string, string[]> = { "A.md": ["B"], "B.md": ["C#Heading"], "D.md": [], "E.md": ["New|alias"] };
  const files = new Set(["A.md", "B.md", "C.md", "D.md", "E.md"]);
  const graph: EmbedGraph = {
    resolvedLinks: { "A.md": { "B.md": 1 }, "B.md": { "C.md": 1 }, "D.md": { "C.md": 2 }, "E.md": {} },
    unresolvedLinks: { "E.md": { New: 1 } },
    embedLinks: (source) => embeds[source] ?? [],
    resolve: (linkpath) => (files.has(`${linkpath}.md`) ? `${linkpath}.md` : null),
  };

  it("follows embeds up the chain, not plain links", () => {
    expect(findEmbedders("C.md", graph).sort()).toEqual(["A.md", "B.md"]);
    expect(findEmbedders("A.md", graph)).toEqual([]);
  });

  it("finds notes waiting for a note that was just created", () => {
    expect(findEmbedders("New.md", graph)).toEqual([]); // not resolvable yet
    files.add("New.md");
    expect(findEmbedders("New.md", graph)).toEqual(["E.md"]);
  });

  it("stops on cycles", () => {
    const cyclic: EmbedGraph = {
      resolvedLinks: { "A.md": { "B.md": 1 }, "B.md": { "A.md": 1 } },
      unresolvedLinks: {},
      embedLinks: (source) => (source === "A.md" ? ["B"] : ["A"]),
      resolve: (linkpath) => `${linkpath}.md`,
    };
    expect(findEmbedders("A.md", cyclic)).toEqual(["B.md"]);
  });
});
