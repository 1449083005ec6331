import { type DataAdapter, FileSystemAdapter, Platform, Plugin, requireApiVersion, resolveSubpath } from "obsidian";

import {
  askAboutNoteCommand,
  BackgroundTasks,
  openAskView,
  openAskViewCommand,
  openRelatedViewCommand,
  reindexCommand,
  resolveActiveNoteCommand,
  sidecarCommands,
} from "./commands";
import { obsidianVault } from "./resolver/obsidian";
import { type DeviceStore, deviceStore, SIDECAR_COMMAND_KEY, SIDECAR_PROGRAM_KEY } from "./deviceSettings";
import { keyStore } from "./models/secrets";
import type { EmbeddingControls } from "./models/embeddingSection";
import type { ModelControls } from "./models/settingsSection";
import type { DevicesControls } from "./remote/devicesSection";
import type { SourcesControls } from "./sourcesSection";
import { MobileServices } from "./remote/mobile";
import { PAIR_ACTION } from "./remote/pairing";
import { Services } from "./services";
import { parseSettings, type RemoteSettingsControls, type SettingsHost, type SidecarControls, type VaultRagSettings, VaultRagSettingTab } from "./settings";
import { nodeLauncher, nodeLocator } from "./sidecar/nodeLauncher";
import { parsePersistedSync, syncEvents } from "./sync";
import { SyncStateFile } from "./sync/stateFile";
import { secretStorageOf, type TokenStore, tokenStore } from "./token";
import { AskView, VIEW_TYPE_ASK } from "./view/askView";
import { RelatedView, VIEW_TYPE_RELATED } from "./view/relatedView";

/** Lifecycle only: what `onload` registers, `onunload` (or Obsidian) takes down again. */
export default class VaultRagPlugin extends Plugin implements SettingsHost {
  override settings: VaultRagSettings = parseSettings(null);
  private readonly tasks = new BackgroundTasks();
  private tokens: TokenStore | null = null;
  private command: DeviceStore | null = null;
  private program: DeviceStore | null = null;
  /** Only where the app gives no file adapter: the sync state stays in data.json. */
  private syncInData = true;
  services: Services | null = null;
  /** On a phone: the desktop's remote listener instead of a sidecar (`remote/mobile.ts`). */
  mobile: MobileServices | null = null;

  override async onload(): Promise<void> {
    const data: unknown = await this.loadData();
    if (Platform.isMobile) {
      this.loadMobile(data);
      return;
    }
    this.tokens = tokenStore(this.app);
    this.command = deviceStore(this.app, SIDECAR_COMMAND_KEY);
    this.program = deviceStore(this.app, SIDECAR_PROGRAM_KEY);
    this.settings = parseSettings(data);
    const plainToken = this.settings.token;
    this.settings.token = this.tokens.load(plainToken);
    const syncedCommand = this.settings.sidecarCommand;
    this.settings.sidecarCommand = this.command.load(syncedCommand);
    this.settings.sidecarProgram = this.program.load(this.settings.sidecarProgram);
    const adapter = this.app.vault.adapter as DataAdapter | undefined; // absent in stand-ins
    // The sync state lives in files of its own (not data.json, which vault sync copies on every
    // change); a state still in data.json (an earlier version) is read once and moved.
    const stateFile =
      adapter !== undefined && typeof adapter.write === "function"
        ? new SyncStateFile(() => this.services?.sync.persisted ?? { ops: [], upserts: [], known: {} }, {
            dir: this.manifest.dir ?? `${this.app.vault.configDir}/plugins/${this.manifest.id}`,
            adapter,
          })
        : null;
    const legacy = isObject(data) ? data.sync : null;
    const persisted = parsePersistedSync((await stateFile?.load()) ?? legacy);
    this.syncInData = stateFile === null;
    const services = new Services(this.app, () => this.settings, {
      resolveSubpath,
      persisted,
      save: () => this.saveAll(),
      stateFile,
      launcher: nodeLauncher(), // desktop only; null on mobile
      locate: nodeLocator(() => this.settings.sidecarProgram, this.manifest.version),
      keys: keyStore(this.app),
      vaultPath: () => (adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null),
      saveToken: async (token) => {
        this.settings.token = token;
        await this.saveSettings();
      },
    });
    this.services = services;
    // The token leaves data.json for secret storage, the command for this device's storage.
    const movedOut = (this.tokens.secret && plainToken !== "") || (this.command.local && syncedCommand !== "");
    if (stateFile !== null && legacy !== null && legacy !== undefined) {
      stateFile.changed(); // the files get the old state; data.json drops it now
      await stateFile.flush();
    }
    if (movedOut || (stateFile !== null && legacy !== null && legacy !== undefined)) await this.saveAll();
    this.addSettingTab(new VaultRagSettingTab(this.app, this));
    const deps = { vault: obsidianVault(this.app), resolveSubpath };
    // A developer's check of the embed resolver: in the palette only with the debug flag
    // (`app.saveLocalStorage("vault-rag-debug", "1")` in the developer console).
    if (debugEnabled(this.app)) this.addCommand(resolveActiveNoteCommand(this.app, deps, this.tasks));
    this.registerView(VIEW_TYPE_ASK, (leaf) => new AskView(leaf, services.viewHost));
    this.addCommand(openAskViewCommand(this.app, VIEW_TYPE_ASK));
    this.addCommand(
      askAboutNoteCommand(this.app, VIEW_TYPE_ASK, (view) => {
        if (view instanceof AskView) view.askAboutNote();
      }),
    );
    this.registerView(VIEW_TYPE_RELATED, (leaf) => new RelatedView(leaf, services.viewHost));
    this.addCommand(openRelatedViewCommand(this.app, VIEW_TYPE_RELATED));
    // Citations and related notes preview on hover through the Page preview core plugin.
    this.registerHoverLinkSource(VIEW_TYPE_ASK, { display: "Vault RAG: ask pane", defaultMod: false });
    this.registerHoverLinkSource(VIEW_TYPE_RELATED, { display: "Vault RAG: related notes", defaultMod: false });
    this.addCommand(reindexCommand(() => services.reindex(), this.tasks));
    for (const command of sidecarCommands(services.sidecar)) this.addCommand(command);
    this.addRibbonIcon("message-square", "Ask the vault", () => void openAskView(this.app, VIEW_TYPE_ASK));
    services.attachStatusBar(this.addStatusBarItem(), (el, callback) => this.registerDomEvent(el, "click", callback));
    // After layout-ready: Obsidian's start-up indexing events are not edits; reconcile covers them.
    this.app.workspace.onLayoutReady(() => {
      for (const ref of syncEvents(this.app, services.sync, services.embeds, services.files)) this.registerEvent(ref);
      services.start();
    });
  }

  /** A phone: no sidecar is started or looked for; the ask pane and the related view ask the
   * paired desktop, and `obsidian://vault-rag-pair?url=…&code=…` (the desktop's QR code) pairs. */
  private loadMobile(data: unknown): void {
    this.settings = parseSettings(data);
    const mobile = new MobileServices(this.app, () => this.settings, { save: () => this.saveAll(), secrets: secretStorageOf(this.app) });
    this.mobile = mobile;
    this.addSettingTab(new VaultRagSettingTab(this.app, this));
    this.registerView(VIEW_TYPE_ASK, (leaf) => new AskView(leaf, mobile.viewHost));
    this.addCommand(openAskViewCommand(this.app, VIEW_TYPE_ASK));
    this.addCommand(
      askAboutNoteCommand(this.app, VIEW_TYPE_ASK, (view) => {
        if (view instanceof AskView) view.askAboutNote();
      }),
    );
    this.registerView(VIEW_TYPE_RELATED, (leaf) => new RelatedView(leaf, mobile.viewHost));
    this.addCommand(openRelatedViewCommand(this.app, VIEW_TYPE_RELATED));
    this.addRibbonIcon("message-square", "Ask the vault", () => void openAskView(this.app, VIEW_TYPE_ASK));
    this.registerObsidianProtocolHandler(PAIR_ACTION, (params) => {
      void mobile.pairFromLink(params).then(() => openAskView(this.app, VIEW_TYPE_ASK));
    });
    // The first screen: "Connect to your desktop", in the ask pane.
    this.app.workspace.onLayoutReady(() => {
      if (mobile.connect.paired() === null) void openAskView(this.app, VIEW_TYPE_ASK);
    });
  }

  override onunload(): void {
    // Commands, views, events and the settings tab are removed by Obsidian; running work is ours.
    this.tasks.abortAll();
    this.services?.stop();
    this.mobile?.stop();
  }

  /** `data.json` changed on disk (e.g. by a sync tool): take the new values. */
  override async onExternalSettingsChange(): Promise<void> {
    const settings = parseSettings(await this.loadData());
    settings.token = this.tokens?.load(settings.token) ?? settings.token;
    settings.sidecarCommand = this.command?.load(settings.sidecarCommand) ?? settings.sidecarCommand;
    settings.sidecarProgram = this.program?.load(settings.sidecarProgram) ?? settings.sidecarProgram;
    // A data.json written by another device may lack this one's pairing record: keep ours.
    const own = this.mobile?.credentials.device()?.deviceId;
    const record = own === undefined ? undefined : this.settings.remoteDevices[own];
    if (own !== undefined && record !== undefined) {
      const theirs = settings.remoteDevices[own];
      settings.remoteDevices[own] = { ...record, counter: Math.max(record.counter, theirs?.counter ?? 0) };
    }
    this.settings = settings;
    this.services?.settingsChanged();
  }

  async saveSettings(): Promise<void> {
    await this.saveAll();
    this.services?.settingsChanged();
  }

  /** `data.json`: the settings (the token only without secret storage; the sync state only
   * where there is no file adapter, else it is in `sync-queue.json` / `sync-known.json`). */
  private async saveAll(): Promise<void> {
    const settings = { ...this.settings };
    if (this.tokens?.secret) {
      this.tokens.save(settings.token);
      settings.token = "";
    }
    if (this.command?.local) {
      this.command.save(settings.sidecarCommand);
      settings.sidecarCommand = "";
    }
    if (this.program?.local) {
      this.program.save(settings.sidecarProgram);
      settings.sidecarProgram = "";
    }
    const sync = this.syncInData ? this.services?.sync.persisted : undefined;
    await this.saveData(sync === undefined ? settings : { ...settings, sync });
  }

  /** The settings tab's "Your desktop" section (mobile only). */
  get remote(): RemoteSettingsControls | null {
    const mobile = this.mobile;
    if (mobile === null) return null;
    return { connect: mobile.connect, forget: () => mobile.forget(), where: mobile.credentials.where, openPane: () => void openAskView(this.app, VIEW_TYPE_ASK) };
  }

  /** The settings tab's "Sources beside the vault" (desktop only). */
  get sources(): SourcesControls | null {
    return this.services?.sources ?? null;
  }

  /** The settings tab's "Other devices" (desktop only). */
  get devices(): DevicesControls | null {
    return this.services?.devices ?? null;
  }

  /** The sidecar's start, connection test and log, for the settings tab. */
  get sidecar(): SidecarControls | null {
    return this.services?.sidecar ?? null;
  }

  /** The settings tab's "Models" section: the sidecar's model calls and the key store. */
  get models(): ModelControls | null {
    return this.services?.models ?? null;
  }

  /** The settings tab's "Embedding model" section: the sidecar's calls, key store, dialog. */
  get embeddings(): EmbeddingControls | null {
    return this.services?.embeddings ?? null;
  }

  /** Where the settings tab says the token is kept. */
  get tokenInSecretStorage(): boolean {
    return this.tokens?.secret ?? false;
  }
}

export const DEBUG_KEY = "vault-rag-debug";

function debugEnabled(app: VaultRagPlugin["app"]): boolean {
  return requireApiVersion("1.8.7") && typeof app.loadLocalStorage === "function" && app.loadLocalStorage(DEBUG_KEY) === "1";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
