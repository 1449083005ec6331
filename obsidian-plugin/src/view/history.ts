/**
 * The ask pane's list of past conversations (`GET /v1/threads`, newest first): each row shows
 * the first question, when the thread last changed and how many messages it holds; a click
 * hands the thread id to the pane, which resumes it. Older threads come page by page ("Show
 * older"). The list is read again every time it opens, so it shows the turns just asked.
 *
 * Stable `data-testid`s: history-panel, history-status, history-list, history-item,
 * history-title, history-meta, history-more.
 */
import type { ThreadList, ThreadSummary } from "../client";
import { clear, h, show } from "./dom";

export const HISTORY_PAGE = 30;

export interface HistoryDeps {
  /** One page of threads, newest first, older than `before` when given. */
  list(before: string | undefined, signal: AbortSignal): Promise<ThreadList>;
  /** The user picked this thread. */
  pick(threadId: string): void;
  /** The conversation the pane shows now (marked in the list). */
  current(): string;
  describeError(error: unknown): string;
  now?(): Date;
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else the date (YYYY-MM-DD). */
export function describeUpdated(when: Date | null, now: Date): string {
  if (when === null) return "";
  const minutes = Math.floor((now.getTime() - when.getTime()) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  if (days === 1) return "yesterday";
  if (days < 7) return `${days} days ago`;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}`;
}

/** The row's second line: "4 messages · 5 min ago". */
export function describeThread(thread: ThreadSummary, now: Date): string {
  const count = `${thread.messageCount} message${thread.messageCount === 1 ? "" : "s"}`;
  const when = describeUpdated(thread.updatedAt, now);
  return when ? `${count} · ${when}` : count;
}

export class HistoryPanel {
  readonly el: HTMLElement;
  readonly statusEl: HTMLElement;
  readonly listEl: HTMLElement;
  readonly moreButton: HTMLButtonElement;
  private loading: AbortController | null = null;
  private nextBefore: string | null = null;

  constructor(
    parent: HTMLElement,
    private readonly deps: HistoryDeps,
  ) {
    this.el = h(parent, "div", { cls: "vault-rag-history", testid: "history-panel", attrs: { role: "region", "aria-label": "Past conversations" } });
    this.statusEl = h(this.el, "div", { cls: "vault-rag-history-status", testid: "history-status", attrs: { "aria-live": "polite" } });
    this.listEl = h(this.el, "ul", { cls: "vault-rag-history-list", testid: "history-list" });
    this.moreButton = h(this.el, "button", { text: "Show older", testid: "history-more" });
    this.moreButton.addEventListener("click", () => void this.load(this.nextBefore ?? undefined));
    show(this.el, false);
  }

  get isOpen(): boolean {
    return !this.el.hidden;
  }

  /** Show the panel and read the newest page. Resolves when it is shown. */
  async open(): Promise<void> {
    show(this.el, true);
    clear(this.listEl);
    await this.load(undefined);
  }

  close(): void {
    this.loading?.abort();
    this.loading = null;
    show(this.el, false);
  }

  async toggle(): Promise<void> {
    if (this.isOpen) this.close();
    else await this.open();
  }

  private async load(before: string | undefined): Promise<void> {
    this.loading?.abort();
    const controller = new AbortController();
    this.loading = controller;
    show(this.moreButton, false);
    this.setStatus("Loading conversations…");
    try {
      const page = await this.deps.list(before, controller.signal);
      if (controller.signal.aborted) return;
      const now = this.deps.now?.() ?? new Date();
      for (const thread of page.threads) this.renderItem(thread, now);
      this.nextBefore = page.nextBefore;
      show(this.moreButton, page.nextBefore !== null);
      this.setStatus(this.listEl.childElementCount === 0 ? "No conversations yet: ask a question below." : null);
    } catch (error) {
      if (controller.signal.aborted) return;
      this.setStatus(`Could not load the conversations: ${this.deps.describeError(error)}`);
    } finally {
      if (this.loading === controller) this.loading = null;
    }
  }

  private renderItem(thread: ThreadSummary, now: Date): void {
    const item = h(this.listEl, "li");
    const current = thread.threadId === this.deps.current();
    const button = h(item, "button", {
      cls: current ? "vault-rag-history-item is-active" : "vault-rag-history-item",
      testid: "history-item",
      attrs: { type: "button", "data-thread-id": thread.threadId, ...(current ? { "aria-current": "true" } : {}) },
    });
    h(button, "span", { cls: "vault-rag-history-title", testid: "history-title", text: thread.title || "(no question)" });
    h(button, "span", { cls: "vault-rag-history-meta", testid: "history-meta", text: describeThread(thread, now) });
    button.addEventListener("click", () => {
      this.close();
      this.deps.pick(thread.threadId);
    });
  }

  private setStatus(text: string | null): void {
    this.statusEl.textContent = text ?? "";
    show(this.statusEl, text !== null);
  }
}
