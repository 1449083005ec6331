/**
 * The ask pane as an Obsidian view in the right sidebar; all behaviour lives in `pane.ts`. The
 * view's state (`getState`/`setState`, saved with the workspace layout) holds the thread id, so
 * after a reload the pane resumes the conversation from the sidecar. "Insert at cursor" writes
 * into the markdown editor that was active last (followed through `active-leaf-change`). While
 * open, the view polls `GET /v1/status?path=<that note>` (its own `StatusPoller`: faster while
 * the index fills, backing off while the sidecar is down) for the pane's index line and empty
 * state.
 */
import {
  Component,
  FileSystemAdapter,
  type HoverParent,
  type HoverPopover,
  ItemView,
  MarkdownRenderer,
  MarkdownView,
  Notice,
  TFile,
  type ViewStateResult,
  type WorkspaceLeaf,
} from "obsidian";

import { parseThread, type SidecarClient } from "../client";
import { deviceText } from "../deviceSettings";
import { THREAD_MODELS_KEY, ThreadModels } from "../models/threadModels";
import type { VaultRagSettings } from "../settings";
import { StatusPoller } from "../status/poller";
import type { Clock } from "../sync/timing";
import type { RemoteConnect } from "./connectForm";
import { LastEditor } from "./editorTarget";
import { EXAMPLE_NOTES, exampleQuestions } from "./examples";
import { HISTORY_PAGE } from "./history";
import type { SidecarLaunch } from "./indexStatus";
import { noteLinks } from "./noteContext";
import { AskPane } from "./pane";
import { hoverNoteTarget, missingNoteMessage, openNoteTarget } from "./workspaceLinks";

export const VIEW_TYPE_ASK = "vault-rag-ask";
/** The collection picker's choice, kept on this device (`collectionChoice.ts`). */
const COLLECTIONS_KEY = "vault-rag-collections";

export interface AskViewHost {
  client: SidecarClient;
  settings(): VaultRagSettings;
  /** Request failures, for the connection notices and the status bar. */
  reportError(error: unknown): void;
  /** Timers of the status poller (tests drive them). */
  clock?: Clock;
  /** The sidecar's supervisor: the empty state's "Start the sidecar" and "Show log". */
  sidecar?: SidecarLaunch;
  /** Where the sidecar is asked (the started one's port); absent: the URL setting. */
  url?: () => string;
  /** A device asking a desktop's remote listener (mobile): "Connect to your desktop" in the empty
   * state, and cited notes this vault does not hold are reported instead of opened. */
  remote?: RemoteConnect;
}

export class AskView extends ItemView implements HoverParent {
  pane: AskPane | null = null;
  /** Set by the Page preview plugin while it shows a citation's preview. */
  hoverPopover: HoverPopover | null = null;
  /** A thread id from `setState` that arrived before the pane was built. */
  private pendingThread: string | null = null;
  /** Where "Insert at cursor" writes. */
  readonly editors = new LastEditor();
  /** The sidecar's status and the last editor's note, for the pane's index line. */
  poller: StatusPoller | null = null;
  /** "Ask about this note" was asked for before the pane was built. */
  private pendingAboutNote = false;
  private unsubscribeSidecar: (() => void) | null = null;

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: AskViewHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return VIEW_TYPE_ASK;
  }

  override getDisplayText(): string {
    return "Ask the vault";
  }

  override getIcon(): string {
    return "message-square";
  }

  override async onOpen(): Promise<void> {
    this.contentEl.empty();
    this.contentEl.addClass("vault-rag-view");
    const { client } = this.host;
    const { workspace } = this.app;
    this.followEditor(workspace.getActiveViewOfType(MarkdownView) ?? workspace.getMostRecentLeaf()?.view ?? null);
    let polledPath: string | null = null;
    const poller = new StatusPoller(
      {
        status: (_path, options) => {
          polledPath = this.editors.target;
          return client.status(polledPath ?? undefined, options);
        },
      },
      { clock: this.host.clock, onUpdate: (snapshot) => this.pane?.status.update(snapshot) },
    );
    this.poller = poller;
    this.registerEvent(
      workspace.on("active-leaf-change", (leaf) => {
        this.followEditor(leaf?.view ?? null);
        this.pane?.noteToggle.setNote(this.editors.target);
        // A poll already under way asks about the previous note: ask again once it is back.
        if (this.editors.target === polledPath) return;
        void poller.poll().then(async () => {
          if (this.editors.target !== polledPath) await poller.poll();
        });
      }),
    );
    this.pane = new AskPane(this.contentEl, {
      ask: (request, signal) => client.ask(request, signal),
      feedback: (answerId, rating) => client.feedback(answerId, rating),
      promote: (answerId) => client.promote(answerId, { folder: this.host.settings().answersFolder || undefined }),
      openNote: (target, event) =>
        void openNoteTarget(this.app, target, event, "", this.host.remote ? (missing) => new Notice(missingNoteMessage(missing), 8_000) : undefined),
      hoverNote: (target, event, el) => hoverNoteTarget(this.app, VIEW_TYPE_ASK, this, event, el, target),
      openSavedNote: (path) => this.openSavedNote(path),
      renderMarkdown: (markdown, el) => this.renderMarkdown(markdown, el),
      defaultMode: () => this.host.settings().answerMode,
      onError: (error) => {
        this.host.reportError(error);
        poller.report(error);
      },
      loadThread: async (threadId, signal) => parseThread(await client.thread(threadId, { signal })).messages,
      sidecarStarting: () => this.sidecarStarting(),
      onThreadChange: () => this.app.workspace.requestSaveLayout(),
      listThreads: (before, signal) => client.threads({ limit: HISTORY_PAGE, before }, { signal }),
      copyText: (text) => navigator.clipboard.writeText(text),
      insertAtCursor: (text) => this.editors.insert(text),
      modelPicker: {
        list: async (signal) => {
          const { chat } = await client.models(true, { signal });
          return { inUse: chat.model, models: chat.models, error: chat.error };
        },
        store: new ThreadModels(deviceText(this.app, THREAD_MODELS_KEY)),
      },
      collectionPicker: {
        list: (signal) => client.collections({ signal }),
        store: deviceText(this.app, COLLECTIONS_KEY),
      },
      noteContext: () => {
        const path = this.editors.target;
        if (path === null) return null;
        return { path, selection: this.editors.selection, links: noteLinks(this.app.metadataCache.resolvedLinks, path) };
      },
      statusPanel: {
        vaultPath: () => this.vaultPath(),
        url: () => this.host.url?.() ?? this.host.settings().sidecarUrl,
        retry: () => void poller.poll(),
        copy: (text) => navigator.clipboard.writeText(text),
        launch: this.host.sidecar,
        examples: () => exampleQuestions(this.noteHeadings()),
        askExample: (question) => void this.pane?.ask(question),
        ...(this.host.remote ? { remote: this.host.remote } : {}),
      },
    });
    this.pane.noteToggle.setNote(this.editors.target);
    this.unsubscribeSidecar = this.host.sidecar?.onChange(() => this.pane?.status.refresh()) ?? null;
    poller.start();
    if (this.pendingThread !== null) void this.pane.resume(this.pendingThread);
    this.pendingThread = null;
    if (this.pendingAboutNote) this.pane.askAboutNote();
    this.pendingAboutNote = false;
  }

  /** The command "Ask about this note": the next questions carry the last editor's note. */
  askAboutNote(): void {
    if (this.pane === null) this.pendingAboutNote = true;
    else this.pane.askAboutNote();
  }

  override getState(): Record<string, unknown> {
    const state = super.getState();
    const threadId = this.pane?.threadId ?? this.pendingThread;
    return threadId ? { ...state, threadId } : state;
  }

  override async setState(state: unknown, result: ViewStateResult): Promise<void> {
    const threadId = isRecord(state) && typeof state.threadId === "string" ? state.threadId : null;
    if (threadId !== null && /^[A-Za-z0-9_-]{1,128}$/.test(threadId)) {
      if (this.pane === null) this.pendingThread = threadId;
      else await this.pane.resume(threadId);
    }
    await super.setState(state, result);
  }

  override async onClose(): Promise<void> {
    this.unsubscribeSidecar?.();
    this.unsubscribeSidecar = null;
    this.poller?.stop();
    this.poller = null;
    this.pane?.destroy();
    this.pane = null;
  }

  /** The newest notes' headings, for the empty state's example questions. */
  private noteHeadings(): { path: string; mtime: number; headings: { heading: string; level: number }[] }[] {
    const files = [...this.app.vault.getMarkdownFiles()].sort((a, b) => b.stat.mtime - a.stat.mtime).slice(0, EXAMPLE_NOTES);
    return files.map((file) => ({
      path: file.path,
      mtime: file.stat.mtime,
      headings: (this.app.metadataCache.getFileCache(file)?.headings ?? []).map(({ heading, level }) => ({ heading, level })),
    }));
  }

  /** The plugin's own sidecar is about to start or starting (its token not handed over yet). */
  private sidecarStarting(): boolean {
    const launch = this.host.sidecar;
    if (!launch?.canStart) return false;
    const kind = launch.state().kind;
    // idle: not asked yet, but it will be at start-up when the setting says so
    return kind === "starting" || (kind === "idle" && this.host.settings().startSidecar);
  }

  /** This vault's folder on disk (desktop only), for the command that starts the sidecar. */
  private vaultPath(): string | null {
    const adapter = this.app.vault.adapter;
    return adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null;
  }

  private followEditor(view: unknown): void {
    if (view instanceof MarkdownView) this.editors.follow(view);
  }

  /** Each render gets its own component, unloaded when a newer render replaces it. */
  private async renderMarkdown(markdown: string, el: HTMLElement): Promise<() => void> {
    const component = new Component();
    component.load();
    await MarkdownRenderer.render(this.app, markdown, el, "", component);
    return () => component.unload();
  }

  /** The sidecar wrote the note on disk; wait (up to 5 s) for Obsidian to see it, then open it. */
  private async openSavedNote(path: string): Promise<void> {
    for (let waited = 0; waited <= 5_000; waited += 100) {
      const file = this.app.vault.getAbstractFileByPath(path);
      if (file instanceof TFile) {
        await this.app.workspace.getLeaf(false).openFile(file);
        return;
      }
      await new Promise((resolve) => window.setTimeout(resolve, 100));
    }
    new Notice(`Vault RAG: saved the answer as ${path}, but Obsidian does not show it yet.`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
