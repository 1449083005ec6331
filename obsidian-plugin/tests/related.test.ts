// @vitest-environment happy-dom
/**
 * The related-notes view: the pure list logic (`view/related.ts`), the tracker's debounce and
 * latest-wins, and `RelatedView` on the obsidian shim with a real `SidecarClient` whose fetch
 * answers like `GET /v1/related` — rows, the linked mark, statuses, click (Ctrl/Cmd: new tab),
 * drag (`[[link]]` as text/plain) and following `active-leaf-change`.
 */
import type { WorkspaceLeaf } from "obsidian";
import { afterEach, describe, expect, it } from "vitest";

import { parseRelated, type RelatedNotes, SidecarClient } from "../src/client";
import { proofResponse } from "./helpers/proofs";
import type { Clock } from "../src/sync/timing";
import {
  RELATED_DEBOUNCE_MS,
  type RelatedState,
  RelatedTracker,
  plainSnippet,
  relatedItems,
  statusMessage,
  wikilink,
} from "../src/view/related";
import { RelatedView } from "../src/view/relatedView";
import * as shim from "./__mocks__/obsidian";

const ANSWER = {
  path: "Rendering/Lumen.md",
  status: "ok",
  chunks_used: 3,
  related: [
    {
      note_path: "Rendering/Nanite.md",
      heading_path: "Nanite > Virtual geometry",
      anchor: "Virtual geometry",
      line_start: 12,
      line_end: 20,
      snippet: "Nanite streams clusters…",
      score: 0.91,
      linked: true,
    },
    {
      note_path: "Tools/Profiling.md",
      heading_path: "",
      anchor: "",
      line_start: 1,
      line_end: 4,
      snippet: "stat gpu shows…",
      score: 0.74,
      linked: false,
    },
  ],
};

/** A clock the test advances by hand. */
function manualClock() {
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
  return { clock, tick, pending: () => timers.length };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the list logic", () => {
  it("shows each note's name, deepest heading and a link to that heading", () => {
    const items = relatedItems(parseRelated(ANSWER));
    expect(items.map((i) => [i.name, i.heading, i.linktext, i.linked])).toEqual([
      ["Nanite", "Virtual geometry", "Rendering/Nanite#Virtual geometry", true],
      ["Profiling", "", "Tools/Profiling", false],
    ]);
  });

  it("says why a list is empty", () => {
    const empty = (status: string) => parseRelated({ path: "A.md", status, related: [] });
    expect(statusMessage(empty("pending"))).toMatch(/still being indexed/);
    expect(statusMessage(empty("not_indexed"))).toMatch(/not indexed yet/);
    expect(statusMessage(empty("ok"))).toBe("No related notes found.");
    expect(statusMessage(parseRelated(ANSWER))).toBeNull();
  });

  it("drags a wikilink; each row opens at its passage's line", () => {
    expect(wikilink("Rendering/Nanite")).toBe("[[Rendering/Nanite]]");
    expect(relatedItems(parseRelated(ANSWER)).map((item) => item.target)).toEqual([
      { linktext: "Rendering/Nanite#Virtual geometry", notePath: "Rendering/Nanite", line: 11 },
      { linktext: "Tools/Profiling", notePath: "Tools/Profiling", line: 0 },
    ]);
  });
});

describe("RelatedTracker", () => {
  it("asks once after switching notes quickly, for the last one", async () => {
    const { clock, tick } = manualClock();
    const asked: string[] = [];
    const states: RelatedState[] = [];
    const tracker = new RelatedTracker(
      async (path) => {
        asked.push(path);
        return parseRelated({ ...ANSWER, path });
      },
      (state) => states.push(state),
      clock,
    );
    tracker.setActive("A.md");
    tick(100);
    tracker.setActive("B.md");
    tick(RELATED_DEBOUNCE_MS - 1);
    expect(asked).toEqual([]);
    tick(1);
    await flush();
    expect(asked).toEqual(["B.md"]);
    expect(states.map((s) => s.kind)).toEqual(["loading", "loaded"]);
    tracker.setActive("B.md"); // the same note again (e.g. the view itself got focus)
    tick(RELATED_DEBOUNCE_MS);
    expect(asked).toEqual(["B.md"]);
    tracker.setActive(null);
    expect(states.at(-1)).toEqual({ kind: "none" });
  });

  it("drops a late answer for a note that is no longer active and aborts its request", async () => {
    const { clock, tick } = manualClock();
    const waiting = new Map<string, { resolve: (r: RelatedNotes) => void; signal: AbortSignal }>();
    const states: RelatedState[] = [];
    const tracker = new RelatedTracker(
      (path, signal) => new Promise((resolve) => waiting.set(path, { resolve, signal })),
      (state) => states.push(state),
      clock,
    );
    tracker.setActive("A.md");
    tick(RELATED_DEBOUNCE_MS);
    tracker.setActive("B.md");
    expect(waiting.get("A.md")?.signal.aborted).toBe(true);
    waiting.get("A.md")?.resolve(parseRelated({ ...ANSWER, path: "A.md" }));
    await flush();
    expect(states.filter((s) => s.kind === "loaded")).toEqual([]);
    tick(RELATED_DEBOUNCE_MS);
    waiting.get("B.md")?.resolve(parseRelated({ ...ANSWER, path: "B.md" }));
    await flush();
    expect(states.at(-1)).toMatchObject({ kind: "loaded", path: "B.md" });
  });
});

interface Opened {
  linktext: string;
  source: string;
  newLeaf: unknown;
  state?: unknown;
}

function setup(answer: (path: string) => { status: number; body: unknown }) {
  const { clock, tick } = manualClock();
  const requests: string[] = [];
  const client = new SidecarClient(
    () => ({ url: "http://127.0.0.1:8765", token: "t" }),
    async (input) => {
      const proof = await proofResponse(input, "t"); // it proves it holds the token first
      if (proof !== null) return proof;
      const url = new URL(input);
      requests.push(url.pathname + url.search);
      const { status, body } = answer(url.searchParams.get("path") ?? "");
      return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
    },
  );
  let active: shim.TFile | null = new shim.TFile("Rendering/Lumen.md");
  const handlers = new Map<string, () => void>();
  const opened: Opened[] = [];
  const hovers: { name: string; data: unknown }[] = [];
  const errors: unknown[] = [];
  const app = {
    workspace: {
      getActiveFile: () => active,
      on: (name: string, callback: () => void) => {
        handlers.set(name, callback);
        return { detach: () => handlers.delete(name) };
      },
      openLinkText: async (linktext: string, source: string, newLeaf: unknown, ...state: unknown[]) => {
        opened.push({ linktext, source, newLeaf, ...(state.length ? { state: state[0] } : {}) });
      },
      trigger: (name: string, data: unknown) => hovers.push({ name, data }),
    },
    vault: { getAbstractFileByPath: (path: string) => new shim.TFile(path) },
    metadataCache: {
      fileToLinktext: (file: shim.TFile) => file.path.replace(/\.md$/, "").split("/").pop() ?? "",
    },
  };
  const leaf = new shim.WorkspaceLeaf(app) as unknown as WorkspaceLeaf;
  const view = new RelatedView(leaf, { client, reportError: (e) => errors.push(e), clock });
  const q = (id: string) => view.contentEl.querySelector<HTMLElement>(`[data-testid="${id}"]`);
  const qa = (id: string) => Array.from(view.contentEl.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`));
  const activate = (path: string | null) => {
    active = path === null ? null : new shim.TFile(path);
    handlers.get("active-leaf-change")?.();
  };
  const settle = async () => {
    tick(RELATED_DEBOUNCE_MS);
    // The first request waits for the stand-in's proof (WebCrypto: slower on a loaded machine).
    for (let i = 0; i < 2_000 && !client.proven; i++) await flush();
    for (let i = 0; i < 5; i++) await flush();
  };
  return { view, q, qa, requests, opened, hovers, errors, activate, settle, handlers };
}

const views: RelatedView[] = [];
afterEach(async () => {
  for (const view of views.splice(0)) {
    await view.onClose();
    view.unload();
  }
});

describe("RelatedView", () => {
  it("lists the active note's related notes with heading, snippet and the linked mark", async () => {
    const ctx = setup(() => ({ status: 200, body: ANSWER }));
    views.push(ctx.view);
    ctx.view.load();
    await ctx.view.onOpen();
    await ctx.settle();
    expect(ctx.requests).toEqual(["/v1/related?path=Rendering%2FLumen.md&k=10"]);
    expect(ctx.q("related-title")?.textContent).toBe("Related to Lumen");
    expect(ctx.qa("related-name").map((el) => el.textContent)).toEqual(["Nanite", "Profiling"]);
    expect(ctx.qa("related-linked").map((el) => el.textContent)).toEqual(["linked"]);
    expect(ctx.qa("related-score").map((el) => el.textContent)).toEqual(["0.91", "0.74"]);
    expect(ctx.qa("related-heading").map((el) => el.textContent)).toEqual(["Virtual geometry"]);
    expect(ctx.qa("related-snippet").map((el) => el.textContent)).toEqual(["Nanite streams clusters…", "stat gpu shows…"]);
    expect(ctx.q("related-status")?.hidden).toBe(true);
  });

  it("opens at the passage's line on click, in a new tab with Ctrl or Cmd, previews on hover, drags a wikilink", async () => {
    const ctx = setup(() => ({ status: 200, body: ANSWER }));
    views.push(ctx.view);
    ctx.view.load();
    await ctx.view.onOpen();
    await ctx.settle();
    const [first, second] = ctx.qa("related-item");
    first?.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    second?.dispatchEvent(new MouseEvent("click", { bubbles: true, metaKey: true }));
    first?.dispatchEvent(new MouseEvent("click", { bubbles: true, ctrlKey: true }));
    const source = "Rendering/Lumen.md";
    expect(ctx.opened).toEqual([
      { linktext: "Rendering/Nanite", source, newLeaf: false, state: { eState: { line: 11 } } },
      { linktext: "Tools/Profiling", source, newLeaf: "tab", state: { eState: { line: 0 } } },
      { linktext: "Rendering/Nanite", source, newLeaf: "tab", state: { eState: { line: 11 } } },
    ]);
    const enter = new MouseEvent("mouseenter");
    first?.dispatchEvent(enter);
    expect(ctx.hovers).toEqual([
      {
        name: "hover-link",
        data: { event: enter, source: "vault-rag-related", hoverParent: ctx.view, targetEl: first, linktext: "Rendering/Nanite", sourcePath: source, state: { scroll: 11 } },
      },
    ]);
    expect(first?.getAttribute("draggable")).toBe("true");
    const data = new Map<string, string>();
    const drag = new Event("dragstart", { bubbles: true });
    Object.defineProperty(drag, "dataTransfer", { value: { setData: (type: string, value: string) => data.set(type, value) } });
    first?.dispatchEvent(drag);
    expect(data.get("text/plain")).toBe("[[Nanite]]");
  });

  it("follows active-leaf-change and says when a note has no vectors yet", async () => {
    const ctx = setup((path) =>
      path === "Daily/Today.md"
        ? { status: 200, body: { path, status: "pending", chunks_used: 0, related: [] } }
        : { status: 200, body: ANSWER },
    );
    views.push(ctx.view);
    ctx.view.load();
    await ctx.view.onOpen();
    await ctx.settle();
    ctx.activate("Daily/Today.md");
    await ctx.settle();
    expect(ctx.requests.at(-1)).toBe("/v1/related?path=Daily%2FToday.md&k=10");
    expect(ctx.q("related-title")?.textContent).toBe("Related to Today");
    expect(ctx.qa("related-item")).toHaveLength(0);
    expect(ctx.q("related-status")?.textContent).toMatch(/still being indexed/);
    ctx.activate(null);
    expect(ctx.q("related-status")?.textContent).toBe("Open a note to see the notes related to it.");
    await ctx.view.onClose();
    ctx.view.unload();
    expect(ctx.handlers.has("active-leaf-change")).toBe(false);
  });

  it("shows the sidecar's error and reports it", async () => {
    const ctx = setup((path) => ({ status: 404, body: { code: "not_found", message: `no note '${path}' in the vault`, detail: null } }));
    views.push(ctx.view);
    ctx.view.load();
    await ctx.view.onOpen();
    await ctx.settle();
    expect(ctx.q("related-status")?.textContent).toBe("The sidecar answered 404: no note 'Rendering/Lumen.md' in the vault");
    expect(ctx.errors).toHaveLength(1);
  });
});

describe("a related passage as plain text", () => {
  it("shows the heading once and the passage as it reads rendered", () => {
    // What the sidecar sent for the sample vault (docs/images/related-notes.png before issue 29).
    expect(plainSnippet("## Render Thread（Draw）优化 里 Draw 最高时，`stat unit` 看 **Mesh draw calls**", ["性能分析", "Render Thread（Draw）优化"])).toBe(
      "里 Draw 最高时，stat unit 看 Mesh draw calls",
    );
    expect(plainSnippet("## 目录结构 | 文件夹 | 内容 | | --- | --- | | `Gameplay/` | Actor 生命周期 |", ["欢迎 Welcome", "目录结构"])).toBe(
      "文件夹 · 内容 · Gameplay/ · Actor 生命周期",
    );
    expect(plainSnippet("- 在 C++ 里改了 → [[Blueprint and C++ Communication]] - see [[Net/Replication and RPCs|RPCs]] and [docs](https://x.dev)")).toBe(
      "在 C++ 里改了 → Blueprint and C++ Communication see RPCs and docs",
    );
    expect(plainSnippet("x".repeat(300))).toHaveLength(160);
  });

  it("does not repeat the headings when the sidecar's snippet is already plain text", () => {
    // What the sidecar sends since its snippets are plain text (docs/images/related-notes.png
    // showed the heading on the line and again at the start of the passage).
    expect(plainSnippet("Render Thread（Draw）优化 stat unit 里 Draw 最高时，问题通常是 draw call 太多", ["性能分析", "Render Thread（Draw）优化"])).toBe(
      "stat unit 里 Draw 最高时，问题通常是 draw call 太多",
    );
    // Parent and child heading both at the start: each dropped once, in order.
    expect(plainSnippet("踩坑记录 Pitfalls 其他零碎的坑 BlueprintNativeEvent 直接调", ["踩坑记录 Pitfalls", "其他零碎的坑"])).toBe("BlueprintNativeEvent 直接调");
    // Only whole words: a heading that is the start of a longer word stays.
    expect(plainSnippet("Collision Enabled SetCollisionEnabled 有几个选项", ["Collision"])).toBe("Enabled SetCollisionEnabled 有几个选项");
    expect(plainSnippet("CollisionEnabled 有几个选项", ["Collision"])).toBe("CollisionEnabled 有几个选项");
    // A heading written with markup reads as its words.
    expect(plainSnippet("Lumen and Nanite details", ["**Lumen** and [[Nanite]]"])).toBe("details");
    // The note's name as the first word of a sentence is text, not a repeated heading.
    expect(plainSnippet("Nanite streams geometry in clusters", [], "Nanite")).toBe("Nanite streams geometry in clusters");
    expect(plainSnippet("# Nanite\n\nNanite streams geometry", [], "Nanite")).toBe("Nanite streams geometry");
  });

  it("names the best heading once, not when it only repeats the note's name", () => {
    const items = relatedItems({
      path: "A.md",
      status: "ok",
      related: [{ note_path: "R/Nanite.md", heading_path: "Nanite", anchor: "Nanite", line_start: 0, snippet: "# Nanite\n\nNanite streams", score: 0.5, linked: false }],
    });
    expect(items[0]?.heading).toBe("");
    expect(items[0]?.snippet).toBe("Nanite streams");
  });
});
