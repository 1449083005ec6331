// @vitest-environment happy-dom
/**
 * The ask pane in happy-dom, through the `AskView` on the obsidian shim: streamed deltas
 * rendered with MarkdownRenderer (throttled), the progress line, citations that call
 * `openLinkText`, feedback and "Save as note", stop, errors, and the conversation's thread.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { type AskEvent, SidecarAuthError, SidecarHttpError, SidecarUnreachableError } from "../src/client";
import type { Clock } from "../src/sync/timing";
import { AskPane } from "../src/view/pane";
import * as shim from "./__mocks__/obsidian";
import { ask, CITATIONS, Feed, progress, settle, setup } from "./helpers/askView";

afterEach(() => {
  document.body.innerHTML = "";
  shim.MarkdownRenderer.calls.length = 0;
});

describe("ask pane", () => {
  it("streams the answer, the progress line and the citations", async () => {
    const ctx = setup({ answerMode: "hybrid" });
    await ctx.view.onOpen();
    expect((ctx.q("mode") as HTMLSelectElement).value).toBe("hybrid");
    const feed = await ask(ctx, "UFUNCTION 怎么用？");
    expect(feed.request).toMatchObject({ question: "UFUNCTION 怎么用？", mode: "hybrid" });
    expect(feed.request?.thread_id).toMatch(/^[0-9a-f]{32}$/);
    expect((ctx.q("ask") as HTMLButtonElement).disabled).toBe(true);
    expect(ctx.q("stop").hidden).toBe(false);

    feed.push(progress("plan", { aspects: 3 }));
    await vi.waitFor(() => expect(ctx.q("progress").textContent).toBe("searching 3 aspects…"));
    feed.push(progress("retrieve_vault", { aspect: 1, found: 4 }));
    await vi.waitFor(() => expect(ctx.q("progress").textContent).toBe("found 4 passages in the vault (aspect 2 of 3)…"));

    feed.push({ type: "delta", text: "用 **UFUNCTION(BlueprintCallable)** 标记，" });
    feed.push({ type: "delta", text: "见 [[C++/UFUNCTION#Specifiers|说明符]]。" });
    await vi.waitFor(() => expect(ctx.q("answer").textContent).toContain("见 说明符。"));
    expect(ctx.q("answer").querySelector("strong")?.textContent).toBe("UFUNCTION(BlueprintCallable)");

    feed.push({ type: "citations", citations: CITATIONS });
    await vi.waitFor(() => expect(ctx.qa("citation")).toHaveLength(2));
    const [vaultLink, webLink] = ctx.qa("citation") as [HTMLAnchorElement, HTMLAnchorElement];
    expect(vaultLink.textContent).toBe("UFUNCTION › Specifiers");
    expect(webLink.getAttribute("href")).toBe("https://dev.epicgames.com/ufunction");
    expect(webLink.getAttribute("target")).toBe("_blank");

    vaultLink.click();
    expect(ctx.app.workspace.openLinkText).toHaveBeenCalledWith("C++/UFUNCTION#Specifiers", "", false);
    // A [[link]] inside the rendered answer opens the same way.
    (ctx.q("answer").querySelector("a.internal-link") as HTMLElement).click();
    expect(ctx.app.workspace.openLinkText).toHaveBeenLastCalledWith("C++/UFUNCTION#Specifiers", "", false);

    feed.push({
      type: "final",
      answer: "用 UFUNCTION 标记。",
      answerId: "ans-1",
      threadId: feed.request?.thread_id ?? null,
      citations: CITATIONS,
      usage: null,
      data: {},
    });
    feed.end();
    await vi.waitFor(() => expect(ctx.q("progress").textContent).toBe("done · 2 sources · 3 aspects"));
    await settle(ctx);
    expect(ctx.q("answer").textContent).toBe("用 UFUNCTION 标记。");
    expect((ctx.q("ask") as HTMLButtonElement).disabled).toBe(false);
    expect(ctx.q("stop").hidden).toBe(true);
  });

  it("opens a citation at its line, in a new tab on Ctrl/Cmd-click, and previews it on hover", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const feed = await ask(ctx, "C# 怎么调用？");
    const cited = [
      { kind: "vault" as const, note_path: "Lang/CSharp.md", heading: "Lang > C# interop", anchor: "C# interop", cite: "", line_start: 42 },
      { kind: "vault" as const, note_path: "Lang/CSharp.md", heading: "", anchor: "", cite: "", line_start: null },
    ];
    feed.push({ type: "citations", citations: cited });
    await vi.waitFor(() => expect(ctx.qa("citation")).toHaveLength(2));
    const [atLine, noLine] = ctx.qa("citation") as [HTMLAnchorElement, HTMLAnchorElement];
    // The heading's "#" would start a nested heading in a link: it reads as a space.
    expect(atLine.getAttribute("data-href")).toBe("Lang/CSharp#C interop");
    expect(atLine.getAttribute("data-line")).toBe("42");
    expect(noLine.hasAttribute("data-line")).toBe(false);

    atLine.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
    expect(ctx.app.workspace.openLinkText).toHaveBeenLastCalledWith("Lang/CSharp", "", false, { eState: { line: 41 } });
    atLine.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, ctrlKey: true }));
    expect(ctx.app.workspace.openLinkText).toHaveBeenLastCalledWith("Lang/CSharp", "", "tab", { eState: { line: 41 } });
    atLine.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, metaKey: true }));
    expect(ctx.app.workspace.openLinkText).toHaveBeenLastCalledWith("Lang/CSharp", "", "tab", { eState: { line: 41 } });
    atLine.dispatchEvent(new MouseEvent("auxclick", { bubbles: true, cancelable: true, button: 1 }));
    expect(ctx.app.workspace.openLinkText).toHaveBeenLastCalledWith("Lang/CSharp", "", "tab", { eState: { line: 41 } });
    noLine.click();
    expect(ctx.app.workspace.openLinkText).toHaveBeenLastCalledWith("Lang/CSharp", "", false);

    const over = new MouseEvent("mouseover", { bubbles: true });
    atLine.dispatchEvent(over);
    expect(ctx.app.workspace.trigger).toHaveBeenLastCalledWith("hover-link", {
      event: over,
      source: "vault-rag-ask",
      hoverParent: ctx.view,
      targetEl: atLine,
      linktext: "Lang/CSharp",
      sourcePath: "",
      state: { scroll: 41 },
    });
  });

  it("rates an answer and saves it as a note, which then opens", async () => {
    const ctx = setup({ answersFolder: "UE" });
    await ctx.view.onOpen();
    const feed = await ask(ctx, "q");
    expect((ctx.q("thumbs-up") as HTMLButtonElement).disabled).toBe(true);
    feed.push({ type: "final", answer: "A", answerId: "ans-9", threadId: null, citations: [], usage: null, data: {} });
    feed.end();
    await vi.waitFor(() => expect((ctx.q("thumbs-up") as HTMLButtonElement).disabled).toBe(false));

    ctx.q("thumbs-down").click();
    await vi.waitFor(() => expect(ctx.client.feedback).toHaveBeenCalledWith("ans-9", -1));
    await vi.waitFor(() => expect(ctx.q("thumbs-down").getAttribute("aria-pressed")).toBe("true"));
    ctx.q("thumbs-up").click();
    await vi.waitFor(() => expect(ctx.client.feedback).toHaveBeenLastCalledWith("ans-9", 1));
    await vi.waitFor(() => expect(ctx.q("thumbs-up").classList.contains("is-active")).toBe(true));
    expect(ctx.q("thumbs-down").classList.contains("is-active")).toBe(false);

    ctx.q("save-as-note").click();
    await vi.waitFor(() => expect(ctx.openFile).toHaveBeenCalledTimes(1));
    expect(ctx.client.promote).toHaveBeenCalledWith("ans-9", { folder: "UE" });
    expect(ctx.openFile).toHaveBeenCalledWith(expect.objectContaining({ path: "Vault RAG Answers/UFUNCTION 怎么用.md", extension: "md" }));
    expect(ctx.q("action-status").textContent).toBe("Saved as Vault RAG Answers/UFUNCTION 怎么用.md");
    expect((ctx.q("save-as-note") as HTMLButtonElement).disabled).toBe(true);
  });

  it("keeps the thread while the pane is open; a new conversation starts another", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const first = await ask(ctx, "one");
    first.push({ type: "final", answer: "1", answerId: "a1", threadId: "server-thread", citations: [], usage: null, data: {} });
    first.end();
    await vi.waitFor(() => expect((ctx.q("ask") as HTMLButtonElement).disabled).toBe(false));
    const second = await ask(ctx, "two");
    expect(second.request?.thread_id).toBe("server-thread");
    expect(second.request?.mode).toBe("strict");
    second.end();
    await vi.waitFor(() => expect(ctx.qa("turn")).toHaveLength(2));

    ctx.q("new-conversation").click();
    expect(ctx.qa("turn")).toHaveLength(0);
    (ctx.q("mode") as HTMLSelectElement).value = "hybrid";
    const third = await ask(ctx, "three");
    expect(third.request?.thread_id).not.toBe("server-thread");
    expect(third.request?.mode).toBe("hybrid");
  });

  it("stops a running answer: the request's signal aborts", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const feed = await ask(ctx, "q");
    feed.push({ type: "delta", text: "partial" });
    await vi.waitFor(() => expect(ctx.q("answer").textContent).toBe("partial"));
    ctx.q("stop").click();
    expect(feed.signal?.aborted).toBe(true);
    await vi.waitFor(() => expect(ctx.q("progress").textContent).toBe("stopped"));
    expect(ctx.q("answer").textContent).toBe("partial");
    expect(ctx.errors).toEqual([]);
  });

  it("shows error events and request failures, and reports the latter", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const feed = await ask(ctx, "q");
    feed.push({ type: "error", code: "model_unavailable", message: "the model server is down" });
    feed.end();
    await vi.waitFor(() => expect(ctx.q("error").hidden).toBe(false));
    expect(ctx.q("error").textContent).toBe("the model server is down");
    expect(ctx.q("progress").textContent).toBe("failed");

    const next = await ask(ctx, "again");
    next.end(new SidecarAuthError("http://127.0.0.1:8765"));
    await vi.waitFor(() => expect(ctx.qa("error")[1]?.hidden).toBe(false));
    expect(ctx.qa("error")[1]?.textContent).toContain("refused the token");
    expect(ctx.errors).toHaveLength(1);
  });

  it("drops streamed text when the graph resets the answer", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const feed = await ask(ctx, "q");
    feed.push({ type: "delta", text: "garbled" });
    feed.push(progress("answer", { reset: true }));
    feed.push({ type: "delta", text: "extracted" });
    await vi.waitFor(() => expect(ctx.q("answer").textContent).toBe("extracted"));
  });

  it("asks on Enter, not on Shift+Enter nor while an input method composes", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const input = ctx.q("question") as HTMLTextAreaElement;
    input.value = "蓝图";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey: true }));
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", isComposing: true }));
    expect(ctx.client.ask).not.toHaveBeenCalled();
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    await vi.waitFor(() => expect(ctx.client.ask).toHaveBeenCalledTimes(1));
    expect(ctx.feeds[0]?.request?.question).toBe("蓝图");
  });

  it("closing the view stops the answer and removes the pane", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const feed = await ask(ctx, "q");
    await ctx.view.onClose();
    expect(feed.signal?.aborted).toBe(true);
    expect(ctx.q("ask-pane")).toBeNull();
  });
});

describe("render throttling", () => {
  it("re-renders at most once per interval while streaming, and once more at the end", async () => {
    let now = 0;
    const timers: { at: number; run: () => void }[] = [];
    const clock: Clock = {
      now: () => now,
      setTimeout: (run, ms) => {
        const timer = { at: now + ms, run };
        timers.push(timer);
        return timer;
      },
      clearTimeout: (timer) => {
        const i = timers.indexOf(timer as (typeof timers)[number]);
        if (i >= 0) timers.splice(i, 1);
      },
    };
    const tick = (ms: number) => {
      now += ms;
      for (const timer of timers.filter((t) => t.at <= now)) {
        timers.splice(timers.indexOf(timer), 1);
        timer.run();
      }
    };
    const renders: string[] = [];
    const feed = new Feed();
    const pane = new AskPane(document.body, {
      ask: (_request, signal) => {
        feed.signal = signal;
        return feed;
      },
      feedback: async () => ({}),
      promote: async () => "",
      openNote: () => undefined,
      openSavedNote: () => undefined,
      renderMarkdown: async (markdown, el) => {
        renders.push(markdown);
        el.textContent = markdown;
        return () => undefined;
      },
      defaultMode: () => "strict",
      clock,
      renderIntervalMs: 100,
      newThreadId: () => "t",
    });
    const done = pane.ask("q");
    for (let i = 0; i < 50; i++) {
      feed.push({ type: "delta", text: `${i} ` });
      await new Promise((resolve) => setTimeout(resolve, 0));
      tick(10); // 50 deltas over 500 ms
    }
    expect(renders.length).toBeGreaterThanOrEqual(5);
    expect(renders.length).toBeLessThanOrEqual(7);
    feed.push({ type: "final", answer: "all", answerId: "x", threadId: null, citations: [], usage: null, data: {} });
    feed.end();
    await done;
    await pane.lastTurn?.settled();
    expect(renders.at(-1)).toBe("all");
    expect(document.body.querySelector('[data-testid="answer"]')?.textContent).toBe("all");
  });
});

describe("a conversation that outlives the view", () => {
  const STORED = [
    { role: "user", content: "What is Lumen?", id: "m1" },
    { role: "assistant", content: "Lumen is **global illumination**.", id: "m2" },
    { role: "user", content: "And Nanite?", id: "m3" },
    { role: "assistant", content: "Virtualised geometry.", id: "m4" },
  ];

  /** Stored threads whose `threadId` fails once as a sidecar still starting, then loads. */
  function unreachableOnce(threadId: string): Record<string, unknown> {
    let calls = 0;
    return {
      get [threadId]() {
        calls++;
        return calls === 1 ? new SidecarUnreachableError("http://127.0.0.1:8765", new Error("ECONNREFUSED")) : STORED;
      },
    };
  }

  it("keeps the thread id in the view state; a new view resumes it from the sidecar", async () => {
    const first = setup();
    await first.view.onOpen();
    const feed = await ask(first, "What is Lumen?");
    feed.push({ type: "final", answer: "x", answerId: "a1", threadId: "thread-7", citations: [], usage: null, data: {} });
    feed.end();
    await vi.waitFor(() => expect(first.view.getState()).toEqual({ threadId: "thread-7" }));
    expect(first.app.workspace.requestSaveLayout).toHaveBeenCalled();
    const saved = first.view.getState();

    // Obsidian reloads: a new view gets the saved state (here before onOpen, as on start-up).
    const second = setup({}, { "thread-7": STORED });
    await second.view.setState(saved, { history: false });
    await second.view.onOpen();
    await vi.waitFor(() => expect(second.qa("turn")).toHaveLength(2));
    await settle(second);
    expect(second.client.thread).toHaveBeenCalledWith("thread-7", expect.objectContaining({ signal: expect.any(AbortSignal) }));
    expect(second.qa("turn-question").map((el) => el.textContent)).toEqual(["What is Lumen?", "And Nanite?"]);
    expect(second.qa("answer").map((el) => el.textContent)).toEqual(["Lumen is global illumination.", "Virtualised geometry."]);
    expect(second.qa("answer")[0]?.querySelector("strong")?.textContent).toBe("global illumination");
    expect((second.qa("thumbs-up")[0] as HTMLButtonElement).disabled).toBe(false); // the answer's id came back
    const next = await ask(second, "More?");
    expect(next.request?.thread_id).toBe("thread-7");
  });

  it("a restored turn keeps its sources, 👍/👎 and Save as note", async () => {
    const cited = [
      { role: "user", content: "UFUNCTION?", id: null },
      { role: "assistant", content: "Expose it with UFUNCTION.", id: "ans-9", citations: CITATIONS },
    ];
    const ctx = setup({}, { "thread-9": cited as never });
    await ctx.view.onOpen();
    await ctx.view.setState({ threadId: "thread-9" }, { history: false });
    await settle(ctx);
    expect(ctx.qa("citation")).toHaveLength(2);
    expect(ctx.q("sources-label").textContent).toBe("2 sources");
    (ctx.qa("thumbs-up")[0] as HTMLButtonElement).click();
    await vi.waitFor(() => expect(ctx.client.feedback).toHaveBeenCalledWith("ans-9", 1));
    expect((ctx.qa("save-as-note")[0] as HTMLButtonElement).disabled).toBe(false);
  });

  it("waits for a sidecar that is still starting, then shows the conversation", async () => {
    const ctx = setup({}, unreachableOnce("thread-7") as never);
    await ctx.view.onOpen();
    const resumed = ctx.view.setState({ threadId: "thread-7" }, { history: false });
    await vi.waitFor(() => expect(ctx.q("resume-wait").textContent).toBe("Waiting for the sidecar to load the earlier conversation (trying again in 1 s)…"));
    expect(ctx.q("resume-error")).toBeNull();
    await resumed;
    await vi.waitFor(() => expect(ctx.qa("turn")).toHaveLength(2), { timeout: 5_000 });
    expect(ctx.q("resume-wait")).toBeNull();
    expect(ctx.errors).toEqual([]); // a start-up wait is not an error
  });

  it("a question asked while the conversation still loads stays last, after the earlier turns", async () => {
    const ctx = setup({}, unreachableOnce("thread-7") as never);
    await ctx.view.onOpen();
    const resumed = ctx.view.setState({ threadId: "thread-7" }, { history: false });
    await vi.waitFor(() => expect(ctx.q("resume-wait")).not.toBeNull());
    const feed = await ask(ctx, "And Lumen in caves?"); // asked during the wait
    expect(feed.request?.thread_id).toBe("thread-7");
    await resumed;
    await vi.waitFor(() => expect(ctx.qa("turn")).toHaveLength(3), { timeout: 5_000 });
    expect(ctx.qa("turn-question").map((el) => el.textContent)).toEqual(["What is Lumen?", "And Nanite?", "And Lumen in caves?"]);
    expect(ctx.view.pane?.lastTurn?.question).toBe("And Lumen in caves?");
    feed.push({ type: "delta", text: "Lumen traces the cave's light." });
    await vi.waitFor(() => expect(ctx.qa("answer").at(-1)?.textContent).toContain("cave's light"));
  });

  it("resumes on setState after the pane is open; an unknown thread starts empty under its id", async () => {
    const ctx = setup({}, { "thread-7": STORED });
    await ctx.view.onOpen();
    await ctx.view.setState({ threadId: "gone" }, { history: false });
    expect(ctx.qa("turn")).toHaveLength(0);
    expect(ctx.q("resume-error")).toBeNull();
    expect(ctx.errors).toEqual([]);
    expect(ctx.view.getState()).toEqual({ threadId: "gone" });
    await ctx.view.setState({ threadId: "thread-7" }, { history: false });
    expect(ctx.qa("turn")).toHaveLength(2);
    await ctx.view.setState({ threadId: "../../etc" }, { history: false }); // not a thread id: ignored
    expect(ctx.view.getState()).toEqual({ threadId: "thread-7" });
  });

  it("says so when the conversation cannot be loaded", async () => {
    const down = new SidecarHttpError(500, "internal error", null, "internal");
    const ctx = setup({}, { "thread-7": down });
    await ctx.view.onOpen();
    await ctx.view.setState({ threadId: "thread-7" }, { history: false });
    expect(ctx.q("resume-error").textContent).toBe("Could not load the earlier conversation: The sidecar answered 500: internal error");
    expect(ctx.errors).toEqual([down]);
    ctx.q("new-conversation").click();
    expect(ctx.q("resume-error")).toBeNull();
    expect(ctx.view.getState()).not.toEqual({ threadId: "thread-7" });
    expect(ctx.app.workspace.requestSaveLayout).toHaveBeenCalledTimes(1);
  });

  it("labels the question box and stops a running answer on Esc", async () => {
    const ctx = setup();
    await ctx.view.onOpen();
    const input = ctx.q("question") as HTMLTextAreaElement;
    expect(input.getAttribute("aria-label")).toBe("Question");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true })); // idle: nothing
    const feed = await ask(ctx, "q");
    feed.push({ type: "delta", text: "partial" });
    await vi.waitFor(() => expect(ctx.q("answer").textContent).toBe("partial"));
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(feed.signal?.aborted).toBe(true);
    await vi.waitFor(() => expect(ctx.q("progress").textContent).toBe("stopped"));
  });
});
