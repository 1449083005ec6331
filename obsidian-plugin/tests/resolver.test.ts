/**
 * Behaviour the shared fixtures do not pin: link-text helpers, `resolveSubpathLike`, and how
 * the resolver copes with real-Obsidian metadata quirks and failures.
 */
import { describe, expect, it } from "vitest";

import { isNoteLink, parseLink, resolveNote, resolveSubpathLike, stripHeading } from "../src/resolver";
import type { ResolveSubpath } from "../src/resolver";
import { compareCodePoints } from "../src/resolver/links";
import { embedAt, MemoryVault, paragraphNote, pos } from "./helpers/memoryVault";

describe("link text", () => {
  it.each([
    ["Note", "Note", []],
    ["Note#A#B", "Note", ["A", "B"]],
    ["Note##A#", "Note", ["A"]],
    ["#^id", "", ["^id"]],
    [" Spaced Name #H|alias", "Spaced Name", ["H"]],
    ["Note\\|alias in a table", "Note", []],
  ])("parseLink(%j)", (link, path, parts) => {
    expect(parseLink(link)).toEqual({ path, parts });
  });

  it.each([
    ["photo.png", false],
    ["doc.pdf", false],
    ["Board.canvas", false],
    ["Note.md", true],
    ["v1.2 Release", true],
    ["Dr. Who", true],
    ["name.longerthan8", true],
  ])("isNoteLink(%j) is %s", (link, expected) => {
    expect(isNoteLink(link)).toBe(expected);
  });

  it("compares headings like Obsidian's stripHeading", () => {
    expect(stripHeading("Q&A: Why? (v2)")).toBe("q a why v2");
    expect(stripHeading("**Bold**  title")).toBe("bold title");
    expect(stripHeading("纹理：采样")).toBe("纹理：采样");
  });

  it("sorts by code point, not UTF-16 unit", () => {
    const astral = "\u{1F600}.md"; // a surrogate pair, whose first unit sorts below U+FF5E
    expect([astral, "\uFF5E.md"].sort(compareCodePoints)).toEqual(["\uFF5E.md", astral]);
  });
});

describe("resolveSubpathLike", () => {
  const text = "# Odd ^thing\nx\n## Sub\ny\n# Next";
  const cache = {
    headings: [
      { heading: "Odd ^thing", level: 1, position: pos(text, 0, 0, 0, 12) },
      { heading: "Sub", level: 2, position: pos(text, 2, 0, 2, 6) },
      { heading: "Next", level: 1, position: pos(text, 4, 0, 4, 6) },
    ],
  };

  it("finds a heading path and where its section ends", () => {
    const match = resolveSubpathLike(cache, "#Odd thing#Sub");
    expect(match).toMatchObject({ type: "heading", current: { heading: "Sub" }, next: { heading: "Next" } });
  });

  it("tries an unknown block id as a heading", () => {
    expect(resolveSubpathLike({ headings: [{ heading: "^x", level: 1, position: pos("# ^x", 0, 0, 0, 4) }] }, "#^x"))
      .toMatchObject({ type: "heading" });
  });

  it("returns null for nothing to find", () => {
    expect(resolveSubpathLike(cache, "#Missing")).toBeNull();
    expect(resolveSubpathLike(cache, "##")).toBeNull();
  });
});

describe("resolveNote on Obsidian's metadata", () => {
  it("does not take the blank line after a loose list item into the block", async () => {
    // Obsidian ends an item followed by a blank line at column 0 of that blank line.
    const text = "- a ^x\n\n- b";
    const item = { parent: -1, id: "x", position: pos(text, 0, 0, 1, 0) };
    const vault = new MemoryVault({
      "T.md": {
        text,
        cache: {
          listItems: [item, { parent: -1, position: pos(text, 2, 0, 2, 3) }],
          blocks: { x: { id: "x", position: item.position } },
        },
      },
      "H.md": paragraphNote("![[T#^x]]", ["![[T#^x]]"]),
    });
    const resolved = await resolveNote(vault, vault.file("H.md"));
    expect(resolved.text).toBe("- a");
  });

  // Where Obsidian ends such a block is unverified; either shape gives the same text.
  it.each([
    ["the list alone", 1, 3],
    ["the list and its ^id line", 3, 4],
  ])("embeds a list named by a following ^id line when the block covers %s", async (_shape, line, col) => {
    const text = "- a\n- b\n\n^ids\n\nafter";
    const block = { id: "ids", position: pos(text, 0, 0, line, col) };
    const vault = new MemoryVault({
      "T.md": {
        text,
        cache: {
          listItems: [
            { parent: -1, position: pos(text, 0, 0, 0, 3) },
            { parent: -1, position: pos(text, 1, 0, 1, 3) },
          ],
          blocks: { ids: block },
        },
      },
      "H.md": paragraphNote("![[T#^ids]]", ["![[T#^ids]]"]),
    });
    expect((await resolveNote(vault, vault.file("H.md"))).text).toBe("- a\n- b");
  });

  it("resolves a markdown-style embed of a note, and leaves an embed the cache does not place on the text alone", async () => {
    const text = "![](T.md) and ![[T]]";
    const stale = { ...embedAt(text, "![[T]]"), position: pos(text, 0, 0, 0, 6) };
    const vault = new MemoryVault({
      "T.md": paragraphNote("target", []),
      "H.md": {
        text,
        cache: { embeds: [{ link: "T.md", original: "![](T.md)", position: pos(text, 0, 0, 0, 9) }, stale] },
      },
    });
    const resolved = await resolveNote(vault, vault.file("H.md"));
    // Markdown-style embeds used to be left alone; Obsidian embeds the note, and so do we now.
    expect(resolved).toMatchObject({ text: "target and ![[T]]", warnings: [], dependencies: ["T.md"] });
  });

  it("leaves %%comments%% out, inline and over lines, and resolves no embed inside one", async () => {
    const text = "a %%hidden ![[T]]%% b\n%%\n![[T]]\n%%\nc ![[T]] 100%% d";
    const vault = new MemoryVault({
      "T.md": paragraphNote("t %%x%% end", []),
      "H.md": {
        text,
        cache: {
          embeds: [embedAt(text, "![[T]]", 0), embedAt(text, "![[T]]", 1), embedAt(text, "![[T]]", 2)],
        },
      },
    });
    const resolved = await resolveNote(vault, vault.file("H.md"));
    expect(resolved).toMatchObject({ text: "a  b\nc t  end 100%% d", warnings: [], dependencies: ["T.md"] });
  });

  it("keeps an embed inside a heading in a quote verbatim", async () => {
    const text = "> ## Title ![[T]]";
    const vault = new MemoryVault({
      "T.md": paragraphNote("target", []),
      "H.md": {
        text,
        cache: {
          sections: [{ type: "blockquote", position: pos(text, 0, 0, 0, 17) }],
          embeds: [embedAt(text, "![[T]]")],
        },
      },
    });
    expect((await resolveNote(vault, vault.file("H.md"))).text).toBe(text);
  });

  it("drops the carriage returns of CRLF notes", async () => {
    const target = "line one\r\nline two\r\n";
    const vault = new MemoryVault({
      "T.md": { text: target, cache: { sections: [{ type: "paragraph", position: pos(target, 0, 0, 1, 9) }] } },
      "H.md": paragraphNote("> ![[T]]", ["![[T]]"]),
    });
    expect((await resolveNote(vault, vault.file("H.md"))).text).toBe("> line one\n> line two");
  });

  it("reports unreadable notes and notes without metadata", async () => {
    const vault = new MemoryVault({
      "T.md": paragraphNote("target", []),
      "N.md": { text: "not indexed", cache: null },
      "H.md": paragraphNote("![[T]] ![[N]]", ["![[T]]", "![[N]]"]),
    });
    vault.unreadable.add("T.md");
    const resolved = await resolveNote(vault, vault.file("H.md"));
    expect(resolved.text).toBe("![[T]] ![[N]]");
    expect(resolved.warnings.map((w) => [w.code, w.target, w.line])).toEqual([
      ["unreadable", "T", 1],
      ["unreadable", "N", 1],
    ]);

    const top = await resolveNote(vault, vault.file("N.md"));
    expect(top).toMatchObject({ text: "", warnings: [{ code: "unreadable", target: null, line: null }] });
  });

  it("stops inlining after maxEmbeds", async () => {
    const vault = new MemoryVault({
      "T.md": paragraphNote("t", []),
      "H.md": paragraphNote("![[T]] ![[T]] ![[T]]", ["![[T]]", "![[T]]", "![[T]]"]),
    });
    const resolved = await resolveNote(vault, vault.file("H.md"), { maxEmbeds: 2 });
    expect(resolved.text).toBe("t t ![[T]]");
    expect(resolved.warnings.map((w) => w.code)).toEqual(["max_depth"]);
  });

  it("treats a subpath Obsidian resolves to something else (a footnote) as missing", async () => {
    const footnotes: ResolveSubpath = (_cache, subpath) =>
      subpath === "#^fn" ? { type: "footnote", start: { line: 0, col: 0, offset: 0 }, end: null } : null;
    const vault = new MemoryVault({
      "T.md": paragraphNote("t", []),
      "H.md": paragraphNote("![[T#^fn]]", ["![[T#^fn]]"]),
    });
    const resolved = await resolveNote(vault, vault.file("H.md"), { resolveSubpath: footnotes });
    expect(resolved.warnings.map((w) => [w.code, w.target])).toEqual([["missing_block", "T#^fn"]]);
  });

  it("rejects when aborted", async () => {
    const vault = new MemoryVault({
      "T.md": paragraphNote("t", []),
      "H.md": paragraphNote("![[T]]", ["![[T]]"]),
    });
    const controller = new AbortController();
    controller.abort(new Error("unloaded"));
    await expect(resolveNote(vault, vault.file("H.md"), { signal: controller.signal })).rejects.toThrow("unloaded");
  });
});
