/**
 * The ask view on the obsidian shim with a fake client, for the pane's tests: `setup()` builds
 * an `AskView` whose client answers `ask` with a `Feed` the test pushes events into, `thread`
 * from `threads` and `threads` from `history`; the workspace records what the view asks of it
 * and has one markdown view (`editor`) as its most recent leaf.
 */
import type { App, WorkspaceLeaf } from "obsidian";
import { expect, vi } from "vitest";

import {
  type AskEvent,
  type AskRequest,
  type SidecarClient,
  SidecarHttpError,
  type SidecarStatus,
  type ThreadList,
} from "../../src/client";
import type { Clock } from "../../src/sync/timing";
import { DEFAULT_SETTINGS, type VaultRagSettings } from "../../src/settings";
import { AskView, type AskViewHost } from "../../src/view/askView";
import * as shim from "../__mocks__/obsidian";

/** A stream of ask events the test feeds by hand; records the request and its signal. */
export class Feed implements AsyncIterable<AskEvent> {
  private readonly queue: AskEvent[] = [];
  private wake: (() => void) | null = null;
  private ended = false;
  request: AskRequest | null = null;
  signal: AbortSignal | null = null;
  error: unknown = null;

  push(...events: AskEvent[]): void {
    this.queue.push(...events);
    this.wake?.();
  }

  end(error: unknown = null): void {
    this.ended = true;
    this.error = error;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<AskEvent> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.signal?.aborted) throw this.signal.reason;
      if (this.ended) {
        if (this.error) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      this.wake = null;
    }
  }
}

export const progress = (node: string, data: Record<string, unknown> = {}): AskEvent => ({
  type: "progress",
  node,
  aspect: typeof data.aspect === "number" ? data.aspect : null,
  reset: data.reset === true,
  data: { node, ...data },
});

export const CITATIONS = [
  {
    kind: "vault" as const,
    note_path: "C++/UFUNCTION.md",
    heading: "UFUNCTION > Specifiers",
    anchor: "Specifiers",
    cite: "[[C++/UFUNCTION#Specifiers]]",
  },
  { kind: "web" as const, url: "https://dev.epicgames.com/ufunction", title: "UFunctions", cite: "https://dev.epicgames.com/ufunction" },
];

/** Stored conversations the fake client's `thread()` answers (`GET /v1/threads/{id}`). */
export type StoredThreads = Record<string, { role: string; content: string; id: string | null }[] | Error>;

/** A text editor over a string: `cursor` is where `replaceSelection` writes. */
export class TextEditor {
  /** What `getSelection` answers (the tests set it). */
  selected = "";

  constructor(
    public text = "",
    public cursor = 0,
  ) {}

  getSelection(): string {
    return this.selected;
  }

  replaceSelection(insert: string): void {
    this.text = this.text.slice(0, this.cursor) + insert + this.text.slice(this.cursor);
    this.cursor += insert.length;
  }
}

/** A status as `GET /v1/status?path=` parses, for `setup().status`. */
export function statusOf(notes: number, pending = 0, note: SidecarStatus["note"] = null): SidecarStatus {
  return { notes, chunks: notes * 4, pending, embedded: notes * 4 - pending, etaSeconds: pending ? 90 : null, lastError: null, writer: null, note, raw: {} };
}

/** The status poller's timers never fire on their own here: tests call `view.poller.poll()`. */
const stillClock: Clock = { now: () => Date.now(), setTimeout: () => 0, clearTimeout: () => undefined };

export function setup(
  settings: Partial<VaultRagSettings> = {},
  threads: StoredThreads = {},
  history: ThreadList[] = [],
  host: Pick<AskViewHost, "sidecar"> = {},
) {
  const feeds: Feed[] = [];
  const statusReply: { current: SidecarStatus | Error } = { current: statusOf(24) };
  const client = {
    ask: vi.fn((request: AskRequest, signal: AbortSignal) => {
      const feed = new Feed();
      feed.request = request;
      feed.signal = signal;
      feeds.push(feed);
      return feed;
    }),
    feedback: vi.fn(async () => ({})),
    promote: vi.fn(async () => "Vault RAG Answers/UFUNCTION 怎么用.md"),
    thread: vi.fn(async (id: string) => {
      const stored = threads[id];
      if (stored === undefined) throw new SidecarHttpError(404, `no conversation with id '${id}'`, null, "not_found");
      if (stored instanceof Error) throw stored;
      return { thread_id: id, messages: stored, summary: "" };
    }),
    /** Each call answers the next page of `history` (the last one again when they run out). */
    /** What `GET /v1/status` answers: `statusReply.current` (an Error is thrown). */
    status: vi.fn(async (path?: string): Promise<SidecarStatus> => {
      const reply = statusReply.current;
      if (reply instanceof Error) throw reply;
      return path === undefined ? reply : { ...reply, note: reply.note ?? { path, indexed: true, chunks: 4, embedded: 4, pending: 0 } };
    }),
    threads: vi.fn(async (_page: { limit?: number; before?: string }) => {
      const page = history.shift() ?? { threads: [], nextBefore: null };
      if (history.length === 0) history.push(page);
      return page;
    }),
  };
  const editor = new TextEditor("Before\n\nAfter", "Before\n".length);
  const listeners: ((leaf: unknown) => void)[] = [];
  const openFile = vi.fn(async () => undefined);
  const app = {
    workspace: {
      openLinkText: vi.fn(async () => undefined),
      /** `hover-link` and other workspace events the view triggers. */
      trigger: vi.fn(),
      getLeaf: vi.fn(() => ({ openFile })),
      requestSaveLayout: vi.fn(),
      on: vi.fn((name: string, callback: (leaf: unknown) => void) => {
        if (name === "active-leaf-change") listeners.push(callback);
        return { detach: () => listeners.splice(listeners.indexOf(callback), 1) };
      }),
      getActiveViewOfType: vi.fn(() => null),
      getMostRecentLeaf: vi.fn((): unknown => null),
    },
    vault: {
      getAbstractFileByPath: vi.fn((path: string) => new shim.TFile(path)),
      adapter: new shim.FileSystemAdapter("/home/me/My Vault"),
      /** The vault's notes (for the empty state's example questions); none unless a test adds them. */
      getMarkdownFiles: vi.fn((): shim.TFile[] => []),
    },
    /** Draft links to Lumen; Ideas links to Draft (a backlink). */
    metadataCache: {
      getFileCache: vi.fn((_file: shim.TFile): { headings?: { heading: string; level: number }[] } | null => null),
      resolvedLinks: {
        "Notes/Draft.md": { "Rendering/Lumen.md": 2, "image.png": 1 },
        "Notes/Ideas.md": { "Notes/Draft.md": 1 },
        "Rendering/Lumen.md": {},
      } as Record<string, Record<string, number>>,
    },
  };
  const noteLeaf = new shim.WorkspaceLeaf(app);
  const noteView = new shim.MarkdownView(noteLeaf, editor, new shim.TFile("Notes/Draft.md"));
  app.workspace.getMostRecentLeaf.mockReturnValue(noteLeaf);
  /** What Obsidian does when the user clicks into a leaf. */
  const activate = (leaf: unknown) => {
    for (const listener of [...listeners]) listener(leaf);
  };
  const errors: unknown[] = [];
  const view = new AskView(new shim.WorkspaceLeaf(app) as unknown as WorkspaceLeaf, {
    client: client as unknown as SidecarClient,
    settings: () => ({ ...DEFAULT_SETTINGS, ...settings }),
    reportError: (error) => errors.push(error),
    clock: stillClock,
    ...host,
  });
  document.body.appendChild(view.containerEl);
  const q = (testid: string) => view.containerEl.querySelector(`[data-testid="${testid}"]`) as HTMLElement;
  const qa = (testid: string) => Array.from(view.containerEl.querySelectorAll(`[data-testid="${testid}"]`)) as HTMLElement[];
  return { view, client, app: app as typeof app & App, feeds, errors, openFile, q, qa, editor, noteView, activate, statusReply };
}

export async function ask(ctx: ReturnType<typeof setup>, question: string) {
  const input = ctx.q("question") as HTMLTextAreaElement;
  const before = ctx.feeds.length;
  input.value = question;
  ctx.q("ask").click();
  await vi.waitFor(() => expect(ctx.feeds.length).toBe(before + 1));
  return ctx.feeds[ctx.feeds.length - 1] as Feed;
}

export const settle = async (ctx: ReturnType<typeof setup>) => {
  await ctx.view.pane?.lastTurn?.settled();
  await new Promise((resolve) => setTimeout(resolve, 0));
};

