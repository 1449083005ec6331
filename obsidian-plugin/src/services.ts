/**
 * The plugin's long-running parts, built once on load and stopped on unload: the sidecar
 * client, save-time sync, the status poller with its status bar item and connection notices.
 * `main.ts` only creates this and hands it to Obsidian's registration calls.
 */
import { type App, Notice } from "obsidian";

import { SidecarClient } from "./client";
import type { ResolveSubpath } from "./resolver";
import type { VaultRagSettings } from "./settings";
import { ConnectionNotices, describeStatus, StatusPoller } from "./status/poller";
import { isExcluded, obsidianNoteSource, SyncEngine } from "./sync";
import type { AskViewHost } from "./view/askView";

export class Services {
  readonly client: SidecarClient;
  readonly sync: SyncEngine;
  readonly poller: StatusPoller;
  readonly viewHost: AskViewHost;
  private readonly notices: ConnectionNotices;
  private statusEl: HTMLElement | null = null;
  private excludedKey: string;
  private started = false;

  constructor(
    app: App,
    private readonly settings: () => VaultRagSettings,
    resolveSubpath: ResolveSubpath,
  ) {
    this.client = new SidecarClient(() => ({ url: settings().sidecarUrl, token: settings().token }));
    this.notices = new ConnectionNotices(
      (message) => new Notice(message, 8_000),
      () => settings().sidecarUrl,
    );
    this.poller = new StatusPoller(this.client, {
      onUpdate: (snapshot) => {
        this.notices.update(snapshot.connection);
        this.renderStatus();
      },
      onRecovered: () => this.sync.kick(),
    });
    this.sync = new SyncEngine(this.client, obsidianNoteSource(app, resolveSubpath), {
      isExcluded: (path) => isExcluded(path, settings().excludedFolders),
      onError: (error) => this.poller.report(error),
      onDropped: (path, error) => console.warn(`Vault RAG: the sidecar refused ${path}:`, error),
      onState: (state) => this.poller.setSyncPending(state.pending),
    });
    this.viewHost = {
      client: this.client,
      settings,
      reportError: (error) => this.poller.report(error),
    };
    this.excludedKey = settings().excludedFolders.join("\n");
  }

  /** The status bar item: text from the poller; a click polls again (`onClick` registers the
   * listener with the plugin, so it goes away on unload). */
  attachStatusBar(el: HTMLElement, onClick: (el: HTMLElement, callback: () => void) => void): void {
    this.statusEl = el;
    el.addClass("vault-rag-status");
    onClick(el, () => void this.poller.poll());
    this.renderStatus();
  }

  /** Once the workspace layout is ready: poll the sidecar and reconcile the vault with it. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.poller.start();
    void this.sync.reconcile();
  }

  /** Settings were saved: poll at once (URL or token may have changed); re-reconcile when the
   * excluded folders changed, so newly included notes get posted. */
  settingsChanged(): void {
    if (!this.started) return;
    void this.poller.poll();
    const key = this.settings().excludedFolders.join("\n");
    if (key !== this.excludedKey) {
      this.excludedKey = key;
      void this.sync.reconcile();
    } else {
      this.sync.kick();
    }
  }

  stop(): void {
    this.sync.stop();
    this.poller.stop();
  }

  private renderStatus(): void {
    if (this.statusEl === null) return;
    const { text, title } = describeStatus(this.poller.current, this.settings().sidecarUrl);
    this.statusEl.setText(text);
    this.statusEl.setAttribute("aria-label", title);
    this.statusEl.setAttribute("data-tooltip-position", "top");
  }
}
