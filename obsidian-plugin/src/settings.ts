import { type App, normalizePath, type Plugin, PluginSettingTab, Setting } from "obsidian";

import type { AnswerMode } from "./client";
import { type ChatSource, type ModelSettings, parseDomains } from "./models/choice";
import { displayEmbeddingSection, type EmbeddingControls } from "./models/embeddingSection";
import { displayModelSection, type ModelControls } from "./models/settingsSection";
import { type DevicesControls, displayDevicesSection } from "./remote/devicesSection";
import { displaySourcesSection, type SourcesControls } from "./sourcesSection";
import { parseRemoteData, type RemoteData } from "./remote/store";
import type { RemoteConnect } from "./view/connectForm";

export interface VaultRagSettings extends ModelSettings, RemoteData {
  /** Base URL of the local sidecar, without a trailing slash. */
  sidecarUrl: string;
  /** Bearer token the sidecar expects; empty when it runs without one. */
  token: string;
  /** The ask pane's default: `strict` (the vault only) or `hybrid` (the vault plus the web). */
  answerMode: AnswerMode;
  /** Vault folders whose notes are never sent to the sidecar; pushed to it too
   * (`PUT /v1/settings/exclude`), so its own scan and watcher skip them. */
  excludedFolders: string[];
  /** Where "Save as note" puts answers (vault-relative); empty: the sidecar's default. */
  answersFolder: string;
  /** Desktop: start the sidecar when Obsidian starts (unless one already answers at the URL). */
  startSidecar: boolean;
  /** The command that starts it; empty: `vault-rag serve --vault <this vault's folder>`. */
  sidecarCommand: string;
  /** The vault-rag program's full path (per device); empty: PATH and the usual install
   * folders are searched (`sidecar/locate.ts`). */
  sidecarProgram: string;
  /** Desktop: the plugin's own sidecar also listens for paired devices (`--remote-listen`). */
  allowRemote: boolean;
  /** Where that listener listens, HOST:PORT. */
  remoteListen: string;
}

export const DEFAULT_REMOTE_LISTEN = "0.0.0.0:8766";

export const DEFAULT_SETTINGS: Readonly<VaultRagSettings> = {
  sidecarUrl: "http://127.0.0.1:8765",
  token: "",
  answerMode: "strict",
  excludedFolders: [],
  answersFolder: "",
  startSidecar: false,
  sidecarCommand: "",
  sidecarProgram: "",
  allowRemote: false,
  remoteListen: DEFAULT_REMOTE_LISTEN,
  remoteDevices: {},
  remoteSecrets: {},
  chatSource: "sidecar",
  chatBaseUrl: "",
  chatModel: "",
  webDomains: [],
};

const URL_HELP = "Where the Vault RAG sidecar listens, e.g. http://127.0.0.1:8765.";

/** Settings from `data.json`: unknown keys are dropped, missing or mistyped ones defaulted. */
export function parseSettings(data: unknown): VaultRagSettings {
  const raw = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
  const url = typeof raw.sidecarUrl === "string" ? normalizeSidecarUrl(raw.sidecarUrl) : null;
  return {
    sidecarUrl: url ?? DEFAULT_SETTINGS.sidecarUrl,
    token: typeof raw.token === "string" ? raw.token.trim() : DEFAULT_SETTINGS.token,
    answerMode: raw.answerMode === "hybrid" ? "hybrid" : "strict",
    excludedFolders: Array.isArray(raw.excludedFolders)
      ? parseFolderList(raw.excludedFolders.filter((f): f is string => typeof f === "string").join("\n"))
      : [],
    answersFolder: typeof raw.answersFolder === "string" ? normalizeFolder(raw.answersFolder) : "",
    startSidecar: raw.startSidecar === true,
    sidecarCommand: typeof raw.sidecarCommand === "string" ? raw.sidecarCommand.trim() : "",
    sidecarProgram: typeof raw.sidecarProgram === "string" ? raw.sidecarProgram.trim() : "",
    allowRemote: raw.allowRemote === true,
    remoteListen: typeof raw.remoteListen === "string" && parseListen(raw.remoteListen) !== null ? raw.remoteListen.trim() : DEFAULT_REMOTE_LISTEN,
    ...parseRemoteData(raw),
    chatSource: (raw.chatSource === "plugin" ? "plugin" : "sidecar") satisfies ChatSource,
    chatBaseUrl: typeof raw.chatBaseUrl === "string" ? raw.chatBaseUrl.trim() : "",
    chatModel: typeof raw.chatModel === "string" ? raw.chatModel.trim() : "",
    webDomains: Array.isArray(raw.webDomains)
      ? parseDomains(raw.webDomains.filter((d): d is string => typeof d === "string").join("\n"))
      : [],
  };
}

/** `http(s)://host[:port][/path]` without a trailing slash, or null for anything else. */
export function normalizeSidecarUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) return null;
  return url.href.replace(/\/+$/, "");
}

/** "HOST:PORT" (IPv6 as "[::]:PORT"), as `vault-rag serve --remote-listen` takes it, or null. */
export function parseListen(value: string): { host: string; port: number } | null {
  const match = /^\s*(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})\s*$/.exec(value);
  if (match === null) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: (match[1] as string).replace(/^\[|\]$/g, ""), port };
}

/** A vault-relative folder: Obsidian's `normalizePath` (forward slashes, no leading or trailing
 * slash), backslashes read as separators, NFC; "" for the vault root. */
export function normalizeFolder(value: string): string {
  const path = normalizePath(value.trim().replace(/\\/g, "/")).normalize("NFC");
  return path === "/" ? "" : path;
}

/** One folder per line (or comma separated), normalised, empty lines and duplicates dropped. */
export function parseFolderList(text: string): string[] {
  const folders = text.split(/[\n,]/).map(normalizeFolder).filter((folder) => folder !== "");
  return [...new Set(folders)];
}

/** What the settings tab needs to start, test and watch the sidecar. */
export interface SidecarControls {
  /** Whether this app can start programs (desktop). */
  readonly canStart: boolean;
  /** The command used when the setting is empty. */
  defaultCommand(): string;
  /** One line saying whether the sidecar answers and takes the token. */
  testConnection(): Promise<string>;
  /** Start it now (or find the one running) and read its token. */
  start(): Promise<void>;
  showLog(): void;
}

/** A phone's settings: the paired desktop (`remote/mobile.ts`). */
export interface RemoteSettingsControls {
  connect: RemoteConnect;
  forget(): Promise<void>;
  /** Where the device key is kept, in words. */
  where: string;
  /** Open the ask pane (its empty state pairs). */
  openPane(): void;
}

/** What the settings tab needs from the plugin. */
export interface SettingsHost extends Plugin {
  settings: VaultRagSettings;
  /** True when the token is kept in Obsidian's secret storage rather than in data.json. */
  readonly tokenInSecretStorage?: boolean;
  /** The sidecar's start, connection test and log (absent in stand-ins). */
  readonly sidecar?: SidecarControls | null;
  /** The models section's sidecar calls and key store (absent in stand-ins). */
  readonly models?: ModelControls | null;
  /** The embedding model section's sidecar calls, key store and dialog (absent in stand-ins). */
  readonly embeddings?: EmbeddingControls | null;
  /** Mobile: the paired desktop instead of a sidecar. */
  readonly remote?: RemoteSettingsControls | null;
  /** Desktop: other devices (the remote listener, pairing, the device list). */
  readonly devices?: DevicesControls | null;
  /** "Sources beside the vault": list, add a web source, remove (desktop only). */
  readonly sources?: SourcesControls | null;
  saveSettings(): Promise<void>;
}

export class VaultRagSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    private readonly host: SettingsHost,
  ) {
    super(app, host);
  }

  private displayRemote(containerEl: HTMLElement, remote: RemoteSettingsControls): void {
    const redraw = () => {
      containerEl.empty();
      displayRemoteSettings(containerEl, remote, this.host.settings, () => this.host.saveSettings(), redraw);
    };
    displayRemoteSettings(containerEl, remote, this.host.settings, () => this.host.saveSettings(), redraw);
  }

  override display(): void {
    const { containerEl } = this;
    containerEl.empty();
    const settings = this.host.settings;
    const save = () => this.host.saveSettings();
    const remote = this.host.remote ?? null;
    if (remote !== null) {
      this.displayRemote(containerEl, remote);
      return;
    }

    const url = new Setting(containerEl).setName("Sidecar URL").setDesc(URL_HELP);
    url.addText((text) =>
      text
        .setPlaceholder(DEFAULT_SETTINGS.sidecarUrl)
        .setValue(settings.sidecarUrl)
        .onChange(async (value) => {
          const normalized = normalizeSidecarUrl(value);
          url.descEl.toggleClass("vault-rag-setting-error", normalized === null);
          url.setDesc(normalized === null ? `Not an http(s) URL: ${value}` : URL_HELP);
          if (normalized === null) return;
          settings.sidecarUrl = normalized;
          await save();
        }),
    );

    new Setting(containerEl)
      .setName("Token")
      .setDesc(
        this.host.tokenInSecretStorage
          ? 'The sidecar\'s access token ("vault-rag token" prints it, and a sidecar the plugin starts hands it over; kept in the app\'s secret storage).'
          : 'The sidecar\'s access token ("vault-rag token" prints it, and a sidecar the plugin starts hands it over; stored in this vault\'s plugin data).',
      )
      .addText((text) => {
        text.inputEl.type = "password";
        text.setValue(settings.token).onChange(async (value) => {
          settings.token = value.trim();
          await save();
        });
      });

    new Setting(containerEl)
      .setName("Answer mode")
      .setDesc("What the ask pane answers from by default; the pane can switch per question.")
      .addDropdown((dropdown) =>
        dropdown
          .addOption("strict", "Vault only")
          .addOption("hybrid", "Vault + web")
          .setValue(settings.answerMode)
          .onChange(async (value) => {
            settings.answerMode = value === "hybrid" ? "hybrid" : "strict";
            await save();
          }),
      );

    new Setting(containerEl)
      .setName("Excluded folders")
      .setDesc(
        "Notes in these folders are never sent to the sidecar, and the sidecar is told to skip them: " +
          "it does not read them from disk and removes any it had indexed. One folder per line; " +
          "`*` matches any characters (`*/drafts`), every other character means itself.",
      )
      .addTextArea((area) =>
        area
          .setPlaceholder("Journal/private")
          .setValue(settings.excludedFolders.join("\n"))
          .onChange(async (value) => {
            settings.excludedFolders = parseFolderList(value);
            await save();
          }),
      );

    new Setting(containerEl)
      .setName("Answers folder")
      .setDesc("Where the pane's save-as-note button writes answers; empty for the sidecar's default.")
      .addText((text) =>
        text
          .setPlaceholder("Answers")
          .setValue(settings.answersFolder)
          .onChange(async (value) => {
            settings.answersFolder = normalizeFolder(value);
            await save();
          }),
      );

    displayModelSection(containerEl, settings, this.host.models ?? null, save);
    const embeddings = this.host.embeddings ?? null;
    // (plain DOM: a stand-in container without a document gets the one-line version)
    if (embeddings !== null && containerEl.ownerDocument !== undefined) displayEmbeddingSection(containerEl, embeddings);
    else new Setting(containerEl).setName("Embedding model").setDesc("Chosen here once the sidecar runs; changing it re-embeds every note.");

    const sources = this.host.sources ?? null;
    if (sources !== null && containerEl.ownerDocument !== undefined) displaySourcesSection(containerEl, sources);

    const devices = this.host.devices ?? null;
    if (devices !== null && containerEl.ownerDocument !== undefined) displayDevicesSection(containerEl, settings, save, devices);

    new Setting(containerEl).setName("Sidecar").setHeading();
    const sidecar = this.host.sidecar ?? null;
    const test = new Setting(containerEl).setName("Test connection").setDesc("Ask the sidecar at this URL whether it answers and takes the token.");
    test.addButton((button) =>
      button.setButtonText("Test connection").onClick(async () => {
        test.setDesc("Asking the sidecar…");
        test.setDesc(sidecar ? await sidecar.testConnection() : "Not available here.");
      }),
    );

    if (sidecar?.canStart) {
      new Setting(containerEl)
        .setName("Start the sidecar with Obsidian")
        .setDesc(
          "Runs the sidecar command below when Obsidian starts, unless one already answers at the URL, and reads its token: " +
            "nothing to paste. It is stopped when the plugin unloads; one started elsewhere is left alone.",
        )
        .addToggle((toggle) =>
          toggle.setValue(settings.startSidecar).onChange(async (value) => {
            settings.startSidecar = value;
            await save();
            if (value) void sidecar.start();
          }),
        );
      let programText: { setValue(value: string): unknown } | null = null;
      const program = new Setting(containerEl)
        .setName("Vault-rag program")
        .setDesc(
          "The full path of the installed vault-rag program, when Obsidian does not find it: empty searches the path and the usual install folders (pipx, pip --user, brew).",
        )
        .addText((text) =>
          (programText = text)
            .setPlaceholder("Found automatically")
            .setValue(settings.sidecarProgram)
            .onChange(async (value) => {
              settings.sidecarProgram = value.trim();
              await save();
            }),
        );
      program.addButton((button) =>
        button.setButtonText("Choose…").onClick(() =>
          pickFile(containerEl, async (path) => {
            settings.sidecarProgram = path;
            programText?.setValue(path);
            await save();
          }),
        ),
      );
      new Setting(containerEl)
        .setName("Sidecar command")
        .setDesc(
          "Run directly, not by a shell; give the full path to vault-rag when Obsidian does not find it on its path " +
            "(e.g. /home/me/vault-rag/.venv/bin/vault-rag). Empty: the default shown.",
        )
        .addText((text) =>
          text
            .setPlaceholder(sidecar.defaultCommand())
            .setValue(settings.sidecarCommand)
            .onChange(async (value) => {
              settings.sidecarCommand = value.trim();
              await save();
            }),
        )
        .addButton((button) => button.setButtonText("Show log").onClick(() => sidecar.showLog()));
    }
  }
}

/** A phone's settings tab: which desktop it asks, pair again, forget; the answer mode. */
function displayRemoteSettings(containerEl: HTMLElement, remote: RemoteSettingsControls, settings: VaultRagSettings, save: () => Promise<void>, redraw: () => void): void {
  new Setting(containerEl).setName("Your desktop").setHeading();
  const paired = remote.connect.paired();
  new Setting(containerEl)
    .setName(paired === null ? "Not connected" : `Connected to ${paired.url}`)
    .setDesc(
      paired === null
        ? "On the desktop: Settings → Vault RAG → Allow other devices, then Pair a device; scan its QR code with this device's camera, or type the address and code in the ask pane."
        : `This device is “${paired.name}”; its key is kept in ${remote.where}. Every message to the desktop is sealed end to end.`,
    )
    .addButton((button) => button.setButtonText(paired === null ? "Connect" : "Pair again").onClick(() => remote.openPane()))
    .addButton((button) =>
      button
        .setButtonText("Forget this desktop")
        .setDisabled(paired === null)
        .onClick(async () => {
          await remote.forget();
          redraw();
        }),
    );
  new Setting(containerEl)
    .setName("Answer mode")
    .setDesc("What the ask pane answers from by default; the pane can switch per question.")
    .addDropdown((dropdown) =>
      dropdown
        .addOption("strict", "Vault only")
        .addOption("hybrid", "Vault + web")
        .setValue(settings.answerMode)
        .onChange(async (value) => {
          settings.answerMode = value === "hybrid" ? "hybrid" : "strict";
          await save();
        }),
    );
}

/** A file picker: the chosen file's full path (Electron gives `File.path`, or `webUtils`). */
function pickFile(parent: HTMLElement, chosen: (path: string) => Promise<void>): void {
  const input = parent.createEl("input", { type: "file" });
  input.hide();
  input.addEventListener("change", () => {
    const file = input.files?.[0];
    const electron = (window as unknown as { require?: (id: string) => { webUtils?: { getPathForFile(f: File): string } } }).require;
    // Electron before 32 gives the path on the File itself; later ones through webUtils.
    const legacy: unknown = file ? Reflect.get(file, "path") : undefined;
    let path = typeof legacy === "string" ? legacy : "";
    if (!path && file && typeof electron === "function") {
      try {
        path = electron("electron").webUtils?.getPathForFile(file) ?? "";
      } catch {
        path = "";
      }
    }
    input.remove();
    if (path) void chosen(path);
  });
  input.click();
}
