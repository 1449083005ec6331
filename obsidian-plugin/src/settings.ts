import { type App, type Plugin, PluginSettingTab, Setting } from "obsidian";

export interface VaultRagSettings {
  /** Base URL of the local sidecar, without a trailing slash. */
  sidecarUrl: string;
  /** Bearer token the sidecar expects; empty when it runs without one. */
  token: string;
}

export const DEFAULT_SETTINGS: Readonly<VaultRagSettings> = {
  sidecarUrl: "http://127.0.0.1:8765",
  token: "",
};

const URL_HELP = "Where the Vault RAG sidecar listens, e.g. http://127.0.0.1:8765.";

/** Settings from `data.json`: unknown keys are dropped, missing or mistyped ones defaulted. */
export function parseSettings(data: unknown): VaultRagSettings {
  const raw = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
  const url = typeof raw.sidecarUrl === "string" ? normalizeSidecarUrl(raw.sidecarUrl) : null;
  return {
    sidecarUrl: url ?? DEFAULT_SETTINGS.sidecarUrl,
    token: typeof raw.token === "string" ? raw.token.trim() : DEFAULT_SETTINGS.token,
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

/** What the settings tab needs from the plugin. */
export interface SettingsHost extends Plugin {
  settings: VaultRagSettings;
  saveSettings(): Promise<void>;
}

export class VaultRagSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    private readonly host: SettingsHost,
  ) {
    super(app, host);
  }

  override display(): void {
    const { containerEl } = this;
    containerEl.empty();

    const url = new Setting(containerEl).setName("Sidecar URL").setDesc(URL_HELP);
    url.addText((text) =>
      text
        .setPlaceholder(DEFAULT_SETTINGS.sidecarUrl)
        .setValue(this.host.settings.sidecarUrl)
        .onChange(async (value) => {
          const normalized = normalizeSidecarUrl(value);
          url.descEl.toggleClass("vault-rag-setting-error", normalized === null);
          url.setDesc(normalized === null ? `Not an http(s) URL: ${value}` : URL_HELP);
          if (normalized === null) return;
          this.host.settings.sidecarUrl = normalized;
          await this.host.saveSettings();
        }),
    );

    new Setting(containerEl)
      .setName("Token")
      .setDesc("The sidecar's access token (stored in this vault's plugin data).")
      .addText((text) => {
        text.inputEl.type = "password";
        text.setValue(this.host.settings.token).onChange(async (value) => {
          this.host.settings.token = value.trim();
          await this.host.saveSettings();
        });
      });
  }
}
