import { Plugin, resolveSubpath } from "obsidian";

import { BackgroundTasks, resolveActiveNoteCommand } from "./commands";
import { obsidianVault } from "./resolver/obsidian";
import { parseSettings, type SettingsHost, type VaultRagSettings, VaultRagSettingTab } from "./settings";

/** Lifecycle only: what `onload` registers, `onunload` (or Obsidian) takes down again. */
export default class VaultRagPlugin extends Plugin implements SettingsHost {
  override settings: VaultRagSettings = parseSettings(null);
  private readonly tasks = new BackgroundTasks();

  override async onload(): Promise<void> {
    this.settings = parseSettings(await this.loadData());
    this.addSettingTab(new VaultRagSettingTab(this.app, this));
    const deps = { vault: obsidianVault(this.app), resolveSubpath };
    this.addCommand(resolveActiveNoteCommand(this.app, deps, this.tasks));
  }

  override onunload(): void {
    // Commands and the settings tab are removed by Obsidian; running work is ours to stop.
    this.tasks.abortAll();
  }

  /** `data.json` changed on disk (e.g. by a sync tool): take the new values. */
  override async onExternalSettingsChange(): Promise<void> {
    this.settings = parseSettings(await this.loadData());
  }

  async saveSettings(): Promise<void> {
    await this.saveData(this.settings);
  }
}
