// @vitest-environment happy-dom
/**
 * "Ask about this note" in the ask pane (`AskView` on the shim): the switch names the last
 * active editor's note and is off without one; a question asked while it is on carries that
 * note, its selection and its links (`AskRequest.note`); the turn says "Using …", then what
 * the answer took from it (`final.focus`); Regenerate asks about the same note again.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { ask, settle, setup } from "./helpers/askView";
import * as shim from "./__mocks__/obsidian";

afterEach(() => {
  document.body.innerHTML = "";
});

const FOCUS = { path: "Notes/Draft.md", indexed: true, linked: 2, selection: true, cited: 2, cited_linked: 1 };

describe("ask about this note", () => {
  it("sends the last editor's note with its selection and links, and says what the answer used", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const toggle = ctx.q("note-toggle") as HTMLInputElement;
    expect(toggle.disabled).toBe(false);
    expect(toggle.checked).toBe(false);
    expect(ctx.q("note-toggle-label").textContent).toBe("Ask about “Draft”");

    const plain = await ask(ctx, "first");
    expect(plain.request?.note).toBeUndefined(); // off: the whole vault, as before
    plain.push({ type: "final", answer: "A", answerId: "a1", threadId: null, citations: [], usage: null, data: {} });
    plain.end();
    await settle(ctx);
    expect(ctx.qa("turn-focus")[0]?.hidden).toBe(true);

    toggle.click();
    ctx.editor.selected = "  the selected sentence  ";
    const feed = await ask(ctx, "这段什么意思？");
    expect(feed.request?.note).toEqual({
      path: "Notes/Draft.md",
      selection: "the selected sentence",
      links: ["Rendering/Lumen.md", "Notes/Ideas.md"], // it links to Lumen; Ideas links to it
    });
    const line = ctx.qa("turn-focus")[1] as HTMLElement;
    expect(line.hidden).toBe(false);
    expect(line.textContent).toBe("Using “Draft” and the selection");
    feed.push({ type: "progress", node: "focus", aspect: null, reset: false, data: { node: "focus", note: "Notes/Draft.md", indexed: true } });
    await vi.waitFor(() => expect(ctx.qa("progress")[1]?.textContent).toBe("reading “Draft” and its links…"));
    feed.push({ type: "final", answer: "B", answerId: "a2", threadId: null, citations: [], usage: null, focus: FOCUS, data: {} });
    feed.end();
    await settle(ctx);
    expect(line.textContent).toBe("Used “Draft”: 2 sources from it, 1 source from notes it links with");

    // Regenerate asks about the same note (and selection) again, even with the switch off now.
    toggle.click();
    ctx.editor.selected = "";
    (ctx.qa("regenerate")[1] as HTMLButtonElement).click();
    await vi.waitFor(() => expect(ctx.feeds).toHaveLength(3));
    expect(ctx.feeds[2]?.request?.note).toEqual(feed.request?.note);
    expect(ctx.feeds[2]?.request?.question).toBe("这段什么意思？");
  });

  it("follows the active editor, and is off and disabled without one", async () => {
    const ctx = setup();
    ctx.app.workspace.getMostRecentLeaf.mockReturnValue(null);
    await ctx.view.onOpen();
    const toggle = ctx.q("note-toggle") as HTMLInputElement;
    expect(toggle.disabled).toBe(true);
    expect(ctx.q("note-toggle-label").textContent).toBe("Ask about a note: open one first");
    ctx.view.askAboutNote(); // the command, with no note open: nothing to switch on
    expect(toggle.checked).toBe(false);

    const leaf = new shim.WorkspaceLeaf(ctx.app);
    new shim.MarkdownView(leaf, ctx.editor, new shim.TFile("Rendering/Lumen.md"));
    ctx.activate(leaf);
    expect(toggle.disabled).toBe(false);
    expect(ctx.q("note-toggle-label").textContent).toBe("Ask about “Lumen”");
    ctx.view.askAboutNote();
    expect(toggle.checked).toBe(true);
    expect(document.activeElement).toBe(ctx.q("question"));
    const feed = await ask(ctx, "q");
    expect(feed.request?.note).toEqual({ path: "Rendering/Lumen.md", links: ["Notes/Draft.md"] });
  });

  it("the command asked before the pane is built switches it on once it is", async () => {
    const ctx = setup();
    ctx.view.askAboutNote();
    await ctx.view.onOpen();
    expect((ctx.q("note-toggle") as HTMLInputElement).checked).toBe(true);
  });
});
