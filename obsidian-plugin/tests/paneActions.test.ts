// @vitest-environment happy-dom
/**
 * The ask pane for daily use, through the `AskView` on the obsidian shim: "New chat", the
 * history list that resumes a past conversation, and per answer Copy, Insert at cursor (into
 * the last active markdown editor), Regenerate and Edit-and-resend.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import type { AskEvent } from "../src/client";
import * as shim from "./__mocks__/obsidian";
import { ask, type Feed, settle, setup, TextEditor } from "./helpers/askView";

const final = (answer: string, threadId: string | null = "thread-1"): AskEvent => ({
  type: "final",
  answer,
  answerId: "a1",
  threadId,
  citations: [],
  usage: null,
  data: {},
});

const STORED = [
  { role: "user", content: "What is Lumen?", id: "m1" },
  { role: "assistant", content: "Lumen is **global illumination**.", id: "m2" },
];

const HISTORY = {
  threads: [
    { threadId: "thread-old", title: "What is Lumen?", updatedAt: new Date(Date.now() - 120_000), messageCount: 2 },
    { threadId: "thread-1", title: "UFUNCTION?", updatedAt: new Date(), messageCount: 2 },
  ],
  nextBefore: null,
};

async function answered(ctx: ReturnType<typeof setup>, question: string, answer: string): Promise<Feed> {
  const feed = await ask(ctx, question);
  feed.push({ type: "delta", text: answer }, final(answer));
  feed.end();
  await vi.waitFor(() => expect(ctx.view.pane?.busy).toBe(false));
  await settle(ctx);
  return feed;
}

const button = (ctx: ReturnType<typeof setup>, testid: string, index = -1) => ctx.qa(testid).at(index) as HTMLButtonElement;

afterEach(() => {
  document.body.innerHTML = "";
  shim.MarkdownRenderer.calls.length = 0;
  vi.restoreAllMocks();
});

describe("new chat and the history list", () => {
  it("New chat empties the pane and starts another thread", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    expect(ctx.q("new-conversation").textContent).toBe("New chat");
    await answered(ctx, "UFUNCTION?", "Mark it.");
    expect(ctx.view.getState()).toEqual({ threadId: "thread-1" });
    ctx.q("new-conversation").click();
    expect(ctx.qa("turn")).toHaveLength(0);
    const state = ctx.view.getState() as { threadId: string };
    expect(state.threadId).toMatch(/^[0-9a-f]{32}$/);
    const next = await ask(ctx, "Another?");
    expect(next.request?.thread_id).toBe(state.threadId);
  });

  it("keeps a new pane's thread in the view state once its first answer is stored", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const feed = await ask(ctx, "UFUNCTION?");
    const own = String(feed.request?.thread_id);
    expect(ctx.app.workspace.requestSaveLayout).not.toHaveBeenCalled();
    feed.push(final("Mark it.", own)); // the sidecar echoes the id the pane made up
    feed.end();
    await vi.waitFor(() => expect(ctx.app.workspace.requestSaveLayout).toHaveBeenCalledTimes(1));
    expect(ctx.view.getState()).toEqual({ threadId: own });
    const more = await ask(ctx, "More?");
    expect(more.request?.thread_id).toBe(own);
    more.push(final("Yes.", own));
    more.end();
    await vi.waitFor(() => expect(ctx.view.pane?.busy).toBe(false));
    expect(ctx.app.workspace.requestSaveLayout).toHaveBeenCalledTimes(1); // same thread: once
  });

  it("lists past conversations and resumes the one clicked, keeping it in the view state", async () => {
    const ctx = setup({}, { "thread-old": STORED }, [HISTORY]);
    await ctx.view.onOpen();
    await answered(ctx, "UFUNCTION?", "Mark it.");
    const saves = ctx.app.workspace.requestSaveLayout.mock.calls.length;
    ctx.q("history").click();
    await vi.waitFor(() => expect(ctx.qa("history-item")).toHaveLength(2));
    expect(ctx.q("history").getAttribute("aria-expanded")).toBe("true");
    expect(ctx.client.threads).toHaveBeenCalledWith({ limit: 30, before: undefined }, expect.objectContaining({ signal: expect.any(AbortSignal) }));
    expect(ctx.qa("history-title").map((el) => el.textContent)).toEqual(["What is Lumen?", "UFUNCTION?"]);
    expect(ctx.qa("history-item")[1]?.getAttribute("aria-current")).toBe("true"); // the one shown

    ctx.qa("history-item")[0]?.click();
    await vi.waitFor(() => expect(ctx.qa("turn")).toHaveLength(1));
    await settle(ctx);
    expect(ctx.q("history-panel").hidden).toBe(true);
    expect(ctx.q("history").getAttribute("aria-expanded")).toBe("false");
    expect(ctx.client.thread).toHaveBeenLastCalledWith("thread-old", expect.anything());
    expect(ctx.q("turn-question").textContent).toBe("What is Lumen?");
    expect(ctx.q("answer").textContent).toBe("Lumen is global illumination.");
    expect(ctx.view.getState()).toEqual({ threadId: "thread-old" });
    expect(ctx.app.workspace.requestSaveLayout.mock.calls.length).toBe(saves + 1);
    const next = await ask(ctx, "And Nanite?");
    expect(next.request?.thread_id).toBe("thread-old");
  });
});

describe("per answer", () => {
  it("Copy puts the answer's markdown on the clipboard, once the answer is complete", async () => {
    const writeText = vi.fn(async (_text: string) => undefined);
    vi.spyOn(navigator, "clipboard", "get").mockReturnValue({ writeText } as unknown as Clipboard);
    const ctx = setup();
    await ctx.view.onOpen();
    const feed = await ask(ctx, "UFUNCTION?");
    feed.push({ type: "delta", text: "Use **UFUNCTION**" });
    await vi.waitFor(() => expect(ctx.q("answer").textContent).toBe("Use UFUNCTION"));
    expect(button(ctx, "copy").disabled).toBe(true); // still streaming
    expect(button(ctx, "insert").disabled).toBe(true);
    feed.push(final("Use **UFUNCTION** [[C++/UFUNCTION]]."));
    feed.end();
    await vi.waitFor(() => expect(button(ctx, "copy").disabled).toBe(false));
    button(ctx, "copy").click();
    await vi.waitFor(() => expect(ctx.q("action-status").textContent).toBe("Copied."));
    expect(writeText).toHaveBeenCalledWith("Use **UFUNCTION** [[C++/UFUNCTION]].");
  });

  it("Insert writes the answer at the cursor of the last active note, not into the pane", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    await answered(ctx, "UFUNCTION?", "Use **UFUNCTION**.");
    button(ctx, "insert").click();
    expect(ctx.editor.text).toBe("Before\nUse **UFUNCTION**.\n\nAfter");
    expect(ctx.q("action-status").textContent).toBe("Inserted into Notes/Draft.md");

    // Another note becomes active, then the pane itself: the insert goes to that other note.
    const other = new TextEditor("x", 1);
    const otherLeaf = new shim.WorkspaceLeaf(ctx.app);
    new shim.MarkdownView(otherLeaf, other, new shim.TFile("Other.md"));
    ctx.activate(otherLeaf);
    ctx.activate(ctx.view.leaf);
    button(ctx, "insert").click();
    expect(other.text).toBe("xUse **UFUNCTION**.\n");
    expect(ctx.editor.text).toBe("Before\nUse **UFUNCTION**.\n\nAfter");

    other.text = "x";
    (otherLeaf.view as shim.MarkdownView).file = null; // that note was closed
    button(ctx, "insert").click();
    expect(other.text).toBe("x");
    expect(ctx.q("action-status").textContent).toBe("Open a note to insert the answer into.");
  });

  it("Regenerate asks the same question again on the thread and leaves the question box alone", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    await answered(ctx, "UFUNCTION?", "First.");
    const input = ctx.q("question") as HTMLTextAreaElement;
    input.value = "half-typed";
    button(ctx, "regenerate", 0).click();
    await vi.waitFor(() => expect(ctx.feeds).toHaveLength(2));
    const again = ctx.feeds[1] as Feed;
    expect(again.request).toMatchObject({ question: "UFUNCTION?", thread_id: "thread-1" });
    expect(input.value).toBe("half-typed");
    expect(ctx.qa("turn-question").map((el) => el.textContent)).toEqual(["UFUNCTION?", "UFUNCTION?"]);
    // While it answers, neither turn can start another question.
    expect(ctx.qa("regenerate").map((b) => (b as HTMLButtonElement).disabled)).toEqual([true, true]);
    expect(ctx.qa("edit-question").map((b) => (b as HTMLButtonElement).disabled)).toEqual([true, true]);
    again.push(final("Second."));
    again.end();
    await vi.waitFor(() => expect(button(ctx, "regenerate", 0).disabled).toBe(false));
  });

  it("Edit puts the question back in the box; sending it asks the edited question on the thread", async () => {
    const ctx = setup({}, { "thread-old": STORED });
    await ctx.view.onOpen();
    await ctx.view.setState({ threadId: "thread-old" }, { history: false });
    await settle(ctx);
    // A turn read back from the thread has its answer actions too.
    expect(button(ctx, "copy").disabled).toBe(false);
    expect(button(ctx, "insert").disabled).toBe(false);
    button(ctx, "edit-question").click();
    const input = ctx.q("question") as HTMLTextAreaElement;
    expect(input.value).toBe("What is Lumen?");
    expect(document.activeElement).toBe(input);
    input.value = "What is Lumen in UE5.4?";
    ctx.q("ask").click();
    await vi.waitFor(() => expect(ctx.feeds).toHaveLength(1));
    expect(ctx.feeds[0]?.request).toMatchObject({ question: "What is Lumen in UE5.4?", thread_id: "thread-old" });
    expect(input.value).toBe("");
  });
});
