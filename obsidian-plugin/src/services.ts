/**
 * The plugin's long-running parts, built once on load and stopped on unload: the sidecar
 * client, the sidecar's supervisor (zero-setup start), save-time sync, the status poller with
 * its status bar item and connection notices. `main.ts` only creates this and hands it to
 * Obsidian's registration calls.
 */
import { type App, Notice } from "obsidian";

import { connectionStateOf, SidecarClient, SidecarHttpError } from "./client";
import { EMBEDDING_KEY_ID, pushEmbeddingKey } from "./models/embeddingChoice";
import { askToReindex } from "./models/embeddingModal";
import type { EmbeddingControls } from "./models/embeddingSection";
import { ModelPusher } from "./models/push";
import type { KeyStore } from "./models/secrets";
import type { ResolveSubpath } from "./resolver";
import type { SidecarControls, VaultRagSettings } from "./settings";
import type { DevicesControls } from "./remote/devicesSection";
import type { SourcesControls } from "./sourcesSection";
import { defaultServeCommand, launchCommand, serveCommandLine, withRemoteListen } from "./sidecar/command";
import { describeConnection, testConnection } from "./sidecar/connection";
import type { Located } from "./sidecar/locate";
import { SidecarLogModal } from "./sidecar/logModal";
import type { Launcher, SidecarSupervisor } from "./sidecar/supervisor";
import { launchControls, StateListeners, supervisorFor } from "./sidecar/wiring";
import { ConnectionNotices, describeStatus, StatusPoller } from "./status/poller";
import { FileChangeQueue, isExcluded, ObsidianEmbedIndex, obsidianNoteSource, type PersistedSync, SyncEngine } from "./sync";
import type { AskViewHost } from "./view/askView";

const PLUGIN_NAME = "Vault RAG";
/** How long settings must be quiet before the excluded folders take effect (one reconcile). */
export const SETTINGS_DEBOUNCE_MS = 1_500;
/** How long the sync queue must be quiet before it is written to the plugin's data. */
export const PERSIST_DEBOUNCE_MS = 2_000;

export interface ServicesHooks {
  resolveSubpath: ResolveSubpath;
  /** The sync state of the last session, from the plugin's data. */
  persisted?: PersistedSync | null;
  /** Write the plugin's data now (settings + this sync state). */
  save?: () => Promise<void>;
  /** Starts programs (desktop: Node's child_process); null or absent: the sidecar is never started. */
  launcher?: Launcher | null;
  /** Finds the vault-rag program when PATH lacks it (desktop: `nodeLocator`). */
  locate?: ((argv: string[]) => Promise<Located>) | null;
  /** This vault's folder on disk (desktop), for the default command. */
  vaultPath?: () => string | null;
  /** Keep the token the started sidecar handed over (the settings, saved). */
  saveToken?: (token: string) => Promise<void>;
  /** The sync state's own files (`sync/stateFile.ts`); absent: it goes into the plugin's data. */
  stateFile?: { changed(): void; flush(): Promise<void> } | null;
  /** Where the chat and web search keys are kept (never data.json); absent: this session only. */
  keys?: KeyStore;
}

export class Services {
  readonly client: SidecarClient;
  readonly sync: SyncEngine;
  /** PDFs and canvases: their paths go to `POST /v1/notes/changed`, never their bytes. */
  readonly files: FileChangeQueue;
  readonly embeds: ObsidianEmbedIndex;
  readonly poller: StatusPoller;
  readonly supervisor: SidecarSupervisor;
  /** What the settings tab and the views use to start, test and watch the sidecar. */
  readonly sidecar: SidecarControls;
  readonly viewHost: AskViewHost;
  /** The chat model chosen in Obsidian, pushed to the sidecar (settings tab's "Models"). */
  readonly models: ModelPusher;
  /** The embedding model chosen in Obsidian (settings tab's "Embedding model"). */
  readonly embeddings: EmbeddingControls;
  /** The settings tab's "Other devices": the remote listener, pairing, the device list. */
  readonly devices: DevicesControls;
  /** The settings tab's "Sources beside the vault": list, add a web source, remove. */
  readonly sources: SourcesControls;
  private readonly notices: ConnectionNotices;
  private statusEl: HTMLElement | null = null;
  private excludedKey: string;
  /** The excluded folders the sidecar last accepted (null: not yet, or the push failed). */
  private pushedExcluded: string | null = null;
  private noFileShown = false;
  private started = false;
  private settingsTimer: number | null = null;
  private persistTimer: number | null = null;
  private persistedKey = "";
  private readonly sidecarListeners = new StateListeners();
  /** Where the sidecar this plugin started listens (its handshake; `--port 0`), over the setting. */
  private startedUrl: string | null = null;

  constructor(
    private readonly app: App,
    private readonly settings: () => VaultRagSettings,
    private readonly hooks: ServicesHooks,
  ) {
    this.client = new SidecarClient(() => ({ url: this.url, token: settings().token }));
    const vaultPath = () => hooks.vaultPath?.() ?? null;
    const command = () => withRemoteListen(serveCommandLine(settings().sidecarCommand, vaultPath()), settings().allowRemote ? settings().remoteListen : null);
    this.supervisor = supervisorFor(this.client, {
      launcher: hooks.launcher ?? null,
      ...(hooks.locate ? { locate: hooks.locate } : {}),
      command,
      cwd: vaultPath,
      saveToken: async (token) => {
        if (token !== settings().token) await hooks.saveToken?.(token);
      },
      useUrl: (url) => {
        this.startedUrl = url;
      },
      onChange: (state) => {
        this.sidecarListeners.notify();
        if (state.kind === "running") {
          void this.poller.poll();
          void this.models.reconnected(); // a (re)started sidecar holds no chosen model yet
          this.pushEmbeddingKey();
        }
      },
    });
    this.sidecar = {
      canStart: this.supervisor.canStart,
      defaultCommand: () => launchCommand(vaultPath()),
      testConnection: async () => describeConnection(await testConnection(this.client), defaultServeCommand(vaultPath(), settings().sidecarUrl)),
      start: () => this.supervisor.ensure(),
      showLog: () => new SidecarLogModal(this.app, this.supervisor.log, () => this.supervisor.state).open(),
    };
    this.notices = new ConnectionNotices(
      (message) => new Notice(message, 8_000),
      () => this.url,
    );
    this.poller = new StatusPoller(this.client, {
      onUpdate: (snapshot) => {
        this.notices.update(snapshot.connection);
        this.renderStatus();
      },
      onRecovered: () => {
        void this.pushExcluded();
        void this.models.reconnected();
        this.pushEmbeddingKey();
        this.sync.kick();
        this.files.kick();
      },
    });
    const memoryKeys = new Map<string, string>();
    const keys: KeyStore = hooks.keys ?? {
      where: "memory (this session)",
      get: (id) => memoryKeys.get(id) ?? "",
      set: (id, value) => void memoryKeys.set(id, value),
    };
    this.models = new ModelPusher(this.client, settings, keys, (error) => this.poller.report(error));
    this.embeddings = { api: this.client, keys, confirm: (cost) => askToReindex(app, cost) };
    this.sources = {
      list: () => this.client.collections(),
      add: (body) => this.client.addSource(body),
      remove: (name) => this.client.removeSource(name),
    };
    this.devices = {
      pairCode: () => this.client.pairCode("read"),
      list: () => this.client.devices(),
      revoke: (id) => this.client.revokeDevice(id),
      apply: () => this.applyRemote(),
    };
    this.embeds = new ObsidianEmbedIndex(app);
    const excluded = (path: string) => isExcluded(path, settings().excludedFolders);
    this.sync = new SyncEngine(this.client, obsidianNoteSource(app, hooks.resolveSubpath, this.embeds, excluded), {
      isExcluded: excluded,
      persisted: hooks.persisted ?? null,
      onError: (error) => this.poller.report(error),
      onDropped: (path, error) => {
        console.warn(`Vault RAG: the sidecar refused ${path}:`, error);
        // The sidecar has no file at a path this vault has: most often it serves another
        // folder. Say so once per session; every later refusal only goes to the console.
        if (error instanceof SidecarHttpError && error.code === "no_file" && !this.noFileShown) {
          this.noFileShown = true;
          new Notice(
            `Vault RAG: the sidecar has no file "${path}" in its vault, so it was not indexed. ` +
              "Is vault-rag serve running with --vault set to this vault's folder?",
            15_000,
          );
        }
      },
      onTooLarge: (path, bytes) => {
        new Notice(`Vault RAG: "${basenameOf(path)}" is too large to index (${formatBytes(bytes)}); it was not sent.`, 10_000);
        this.renderStatus();
      },
      onState: (state) => {
        this.poller.setSyncPending(state.pending);
        this.schedulePersist();
      },
    });
    this.files = new FileChangeQueue(this.client, {
      isExcluded: excluded,
      onError: (error) => this.poller.report(error),
      onDropped: (paths, error) => console.warn(`Vault RAG: the sidecar refused ${paths.join(", ")}:`, error),
    });
    this.viewHost = {
      client: this.client,
      settings,
      reportError: (error) => this.poller.report(error),
      url: () => this.url,
      sidecar: launchControls(this.supervisor, this.sidecarListeners, command, () => this.sidecar.showLog()),
    };
    this.excludedKey = settings().excludedFolders.join("\n");
  }

  /** "Allow other devices" changed: restart the sidecar this plugin started with (or without)
   * `--remote-listen`; a sidecar started elsewhere is left alone (the line says what to run). */
  private async applyRemote(): Promise<string> {
    const { allowRemote, remoteListen } = this.settings();
    const flag = `--remote-listen ${remoteListen}`;
    if (this.supervisor.owns || (allowRemote && this.supervisor.canStart && this.supervisor.state.kind !== "running")) {
      await this.supervisor.stop();
      await this.supervisor.ensure();
      const state = this.supervisor.state;
      if (state.kind === "failed") return `The sidecar did not start: ${state.message}`;
      return allowRemote ? `The sidecar listens for paired devices on ${remoteListen}.` : "The sidecar no longer listens for other devices.";
    }
    if (this.supervisor.state.kind === "running") {
      return allowRemote
        ? `A sidecar started outside Obsidian is running: restart it with ${flag} (vault-rag serve … ${flag}).`
        : "A sidecar started outside Obsidian is running: restart it without --remote-listen.";
    }
    return allowRemote ? `Start the sidecar with ${flag}.` : "Other devices are not allowed.";
  }

  /** The sidecar's URL: where the one this plugin started listens, else the setting. */
  get url(): string {
    return this.startedUrl ?? this.settings().sidecarUrl;
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
    // Zero-setup: start the sidecar (or find it running) and read its token.
    if (this.settings().startSidecar && this.supervisor.canStart) void this.supervisor.ensure();
    this.poller.start();
    void this.models.push();
    // The sidecar owns the exclusions (its own scan and watcher honour them): tell it first,
    // so the reconcile compares against an index without the excluded notes.
    void this.pushExcluded().finally(() => void this.sync.reconcile());
  }

  /** Send the excluded folders to the sidecar when it does not have this list yet; a failure
   * is retried when the sidecar is back (the poller's recovery) or the setting changes. */
  /** A (re)started sidecar holds the embedding endpoint's key in memory only: send it again. */
  private pushEmbeddingKey(): void {
    pushEmbeddingKey(this.client, this.embeddings.keys.get(EMBEDDING_KEY_ID)).catch((error: unknown) => this.poller.report(error));
  }

  private async pushExcluded(): Promise<void> {
    const folders = [...this.settings().excludedFolders];
    const key = folders.join("\n");
    if (key === this.pushedExcluded) return;
    try {
      await this.client.setExcluded(folders);
      this.pushedExcluded = key;
    } catch (error) {
      this.pushedExcluded = null;
      this.poller.report(error);
      if (connectionStateOf(error) === null) console.warn("Vault RAG: the sidecar refused the excluded folders:", error);
    }
  }

  /** Settings were saved (maybe on every keystroke): once they have been quiet for a moment,
   * poll (URL or token may have changed) and re-reconcile when the excluded folders changed, so
   * newly included notes get posted. */
  settingsChanged(): void {
    if (!this.started) return;
    if (this.settingsTimer !== null) window.clearTimeout(this.settingsTimer);
    this.settingsTimer = window.setTimeout(() => {
      this.settingsTimer = null;
      this.applySettings();
    }, SETTINGS_DEBOUNCE_MS);
  }

  private applySettings(): void {
    void this.poller.poll();
    void this.models.push();
    const key = this.settings().excludedFolders.join("\n");
    if (key !== this.excludedKey) {
      this.excludedKey = key;
      void this.pushExcluded().finally(() => void this.sync.reconcile());
    } else {
      this.sync.kick();
    }
  }

  /** Save the sync queue once it has been quiet for a moment (and only when it changed). */
  private schedulePersist(): void {
    if (this.hooks.stateFile) {
      this.hooks.stateFile.changed();
      return;
    }
    if (this.hooks.save === undefined || this.persistTimer !== null) return;
    this.persistTimer = window.setTimeout(() => {
      this.persistTimer = null;
      void this.persistNow();
    }, PERSIST_DEBOUNCE_MS);
  }

  async persistNow(): Promise<void> {
    if (this.hooks.stateFile) {
      await this.hooks.stateFile.flush();
      return;
    }
    const key = JSON.stringify(this.sync.persisted);
    if (key === this.persistedKey || this.hooks.save === undefined) return;
    this.persistedKey = key;
    await this.hooks.save();
  }

  stop(): void {
    for (const timer of [this.settingsTimer, this.persistTimer]) if (timer !== null) window.clearTimeout(timer);
    this.settingsTimer = this.persistTimer = null;
    this.sync.stop();
    this.files.stop();
    this.poller.stop();
    void this.supervisor.stop(); // only a sidecar this plugin started
    void this.persistNow(); // what is still queued is sent after the next start
  }

  /** "Re-index vault": every note compared with the sidecar's index, what differs sent. */
  async reindex(): Promise<void> {
    new Notice(`${PLUGIN_NAME}: checking every note against the sidecar's index…`);
    const done = await this.sync.reindex();
    void this.poller.poll();
    if (done === null) {
      new Notice(`${PLUGIN_NAME}: the sidecar could not be reached; the re-index goes on when it is back.`, 8_000);
      return;
    }
    const sent = done.changed === 0 ? "all in step" : `${done.changed} sent to the sidecar`;
    new Notice(`${PLUGIN_NAME}: re-index: ${done.read} note${done.read === 1 ? "" : "s"} read and compared, ${sent}.`, 8_000);
  }

  private renderStatus(): void {
    if (this.statusEl === null) return;
    const status = describeStatus(this.poller.current, this.url);
    let { text, title } = status;
    const tooLarge = this.sync.state.tooLarge;
    if (tooLarge.length > 0) {
      text += ` · ${tooLarge.length} too large`;
      title += `\nNot indexed, too large: ${tooLarge.map(basenameOf).join(", ")}`;
    }
    this.statusEl.setText(text);
    this.statusEl.setAttribute("aria-label", title);
    this.statusEl.setAttribute("data-tooltip-position", "top");
  }
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
}

function formatBytes(bytes: number): string {
  return bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${Math.ceil(bytes / 1_000)} kB`;
}
