// @vitest-environment happy-dom
/**
 * The pieces behind "History" and "Insert at cursor", on their own: how a thread's last change
 * reads, the history panel's pages, empty list and errors, and which editor an insert goes to.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { SidecarUnreachableError, type ThreadList } from "../src/client";
import { insertionText, LastEditor } from "../src/view/editorTarget";
import { describeThread, describeUpdated, HistoryPanel } from "../src/view/history";
import { describeError } from "../src/view/pane";
import { TextEditor } from "./helpers/askView";

const NOW = new Date("2026-12-01T15:00:00Z");
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const MIN = 60_000;

afterEach(() => {
  document.body.innerHTML = "";
});

describe("when a thread last changed", () => {
  it("reads as a short relative time, then a date", () => {
    expect(describeUpdated(ago(20_000), NOW)).toBe("just now");
    expect(describeUpdated(ago(5 * MIN), NOW)).toBe("5 min ago");
    expect(describeUpdated(ago(3 * 60 * MIN + 5 * MIN), NOW)).toBe("3 h ago");
    expect(describeUpdated(ago(30 * 60 * MIN), NOW)).toBe("yesterday");
    expect(describeUpdated(ago(4 * 24 * 60 * MIN), NOW)).toBe("4 days ago");
    expect(describeUpdated(new Date(2026, 0, 5, 12), NOW)).toBe("2026-01-05");
    expect(describeUpdated(null, NOW)).toBe("");
  });

  it("goes with the message count", () => {
    expect(describeThread({ threadId: "a", title: "q", updatedAt: ago(5 * MIN), messageCount: 4 }, NOW)).toBe("4 messages · 5 min ago");
    expect(describeThread({ threadId: "a", title: "q", updatedAt: null, messageCount: 1 }, NOW)).toBe("1 message");
  });
});

function panel(pages: (ThreadList | Error)[], current = "t2") {
  const list = vi.fn(async (_before: string | undefined, _signal: AbortSignal) => {
    const page = pages.shift();
    if (page === undefined) throw new Error("no more pages in this test");
    if (page instanceof Error) throw page;
    return page;
  });
  const pick = vi.fn();
  const history = new HistoryPanel(document.body, { list, pick, current: () => current, describeError: (e) => describeError(e), now: () => NOW });
  const items = () => Array.from(document.querySelectorAll('[data-testid="history-item"]')) as HTMLButtonElement[];
  return { history, list, pick, items };
}

const thread = (id: string, title: string, minutes: number, count = 2) => ({ threadId: id, title, updatedAt: ago(minutes * MIN), messageCount: count });

describe("the history panel", () => {
  it("lists the threads newest first, marks the current one, and hands a click to the pane", async () => {
    const { history, list, pick, items } = panel([{ threads: [thread("t1", "Lumen?", 2, 4), thread("t2", "Nanite?", 90)], nextBefore: null }]);
    expect(history.el.hidden).toBe(true);
    await history.open();
    expect(history.el.hidden).toBe(false);
    expect(list).toHaveBeenCalledWith(undefined, expect.any(AbortSignal));
    expect(items().map((b) => b.dataset.threadId)).toEqual(["t1", "t2"]);
    expect(items().map((b) => b.querySelector('[data-testid="history-title"]')?.textContent)).toEqual(["Lumen?", "Nanite?"]);
    expect(items()[0]?.querySelector('[data-testid="history-meta"]')?.textContent).toBe("4 messages · 2 min ago");
    expect(items().map((b) => b.getAttribute("aria-current"))).toEqual([null, "true"]);
    expect(history.statusEl.hidden).toBe(true);
    expect(history.moreButton.hidden).toBe(true);
    items()[0]?.click();
    expect(pick).toHaveBeenCalledWith("t1");
    expect(history.isOpen).toBe(false);
  });

  it("pages with the cursor the sidecar gave, and reads the list again when reopened", async () => {
    const { history, list, items } = panel([
      { threads: [thread("t3", "c", 1)], nextBefore: "cursor-1" },
      { threads: [thread("t2", "b", 2)], nextBefore: null },
      { threads: [thread("t9", "new", 0), thread("t3", "c", 1)], nextBefore: "cursor-9" },
    ]);
    await history.open();
    expect(history.moreButton.hidden).toBe(false);
    history.moreButton.click();
    await vi.waitFor(() => expect(items()).toHaveLength(2));
    expect(list).toHaveBeenLastCalledWith("cursor-1", expect.any(AbortSignal));
    expect(items().map((b) => b.dataset.threadId)).toEqual(["t3", "t2"]);
    expect(history.moreButton.hidden).toBe(true);
    await history.toggle(); // close
    await history.toggle(); // open: the newest page again, not appended
    expect(list).toHaveBeenLastCalledWith(undefined, expect.any(AbortSignal));
    expect(items().map((b) => b.dataset.threadId)).toEqual(["t9", "t3"]);
  });

  it("says when there is nothing yet, and when the sidecar cannot be reached", async () => {
    const down = new SidecarUnreachableError("http://127.0.0.1:8765", new Error("refused"));
    const { history, items } = panel([{ threads: [], nextBefore: null }, down]);
    await history.open();
    expect(items()).toEqual([]);
    expect(history.statusEl.textContent).toBe("No conversations yet: ask a question below.");
    history.close();
    await history.open();
    expect(history.statusEl.textContent).toMatch(/^Could not load the conversations: Cannot reach the Vault RAG sidecar at http:\/\/127\.0\.0\.1:8765\. Start it with "vault-rag serve"/);
  });
});

describe("insert at cursor", () => {
  const view = (path: string | null, editor = new TextEditor("ab", 1)) => ({ editor, file: path === null ? null : { path } });

  it("writes the answer at the cursor of the last markdown view it followed", () => {
    const editors = new LastEditor();
    expect(editors.insert("answer")).toBeNull(); // no editor yet
    const first = view("A.md");
    const second = view("B.md");
    editors.follow(first);
    editors.follow(second);
    editors.follow(null); // the pane itself became active: still B
    expect(editors.target).toBe("B.md");
    expect(editors.insert("  **Lumen** [[GI]]  ")).toBe("B.md");
    expect(second.editor.text).toBe("a**Lumen** [[GI]]\nb");
    expect(first.editor.text).toBe("ab");
  });

  it("inserts nothing into a closed note or for an empty answer", () => {
    const editors = new LastEditor();
    const closed = view(null);
    editors.follow(closed);
    expect(editors.insert("answer")).toBeNull();
    expect(closed.editor.text).toBe("ab");
    const open = view("A.md");
    editors.follow(open);
    expect(editors.insert("   ")).toBeNull();
    expect(open.editor.text).toBe("ab");
    expect(insertionText("x\n\n")).toBe("x\n");
  });
});
