/**
 * The plugin's lifecycle against the `obsidian` shim: what onload registers, the resolve
 * command end to end on a fixture vault, the settings tab, and onunload stopping work.
 */
import path from "node:path";

import type { App, PluginManifest } from "obsidian";
import { afterEach, describe, expect, it, vi } from "vitest";

import VaultRagPlugin from "../src/main";
import { resolveNote } from "../src/resolver";
import { DEFAULT_SETTINGS } from "../src/settings";
import * as shim from "./__mocks__/obsidian";
import { FIXTURES, type FixtureFile, FixtureVault } from "./helpers/fixtureVault";

const MANIFEST = { id: "vault-rag", name: "Vault RAG", version: "0.1.0", minAppVersion: "1.4.0" };

interface FakeApp {
  active: (FixtureFile & { basename: string }) | null;
  read: (file: FixtureFile) => Promise<string>;
}

function fakeApp(vault: FixtureVault, active: string | null) {
  const state: FakeApp = {
    active: active === null ? null : { ...vault.file(active), basename: path.basename(active, ".md") },
    read: async (file) => vault.read(file),
  };
  const app = {
    workspace: { getActiveFile: () => state.active },
    metadataCache: {
      getFirstLinkpathDest: (linkpath: string, source: string) => vault.getFirstLinkpathDest(linkpath, source),
      getFileCache: (file: FixtureFile) => vault.getFileCache(file),
    },
    vault: { cachedRead: (file: FixtureFile) => state.read(file) },
  };
  return { app: app as unknown as App, state };
}

async function loadPlugin(app: App, data: unknown = null) {
  const plugin = new VaultRagPlugin(app, MANIFEST as PluginManifest);
  const fake = plugin as unknown as shim.Plugin;
  fake.data = data;
  await plugin.onload();
  return { plugin, fake };
}

function resolveCommand(fake: shim.Plugin): (checking: boolean) => boolean | undefined {
  const command = fake.commands.find((c) => c.id === "resolve-active-note-embeds");
  if (!command?.checkCallback) throw new Error("resolve command not registered");
  return command.checkCallback;
}

afterEach(() => {
  shim.Notice.shown.length = 0;
});

describe("VaultRagPlugin", () => {
  const vault = new FixtureVault(path.join(FIXTURES, "recursive-embed"));

  it("registers its settings tab and command on load", async () => {
    const { fake } = await loadPlugin(fakeApp(vault, "A.md").app);
    expect(fake.settingTabs).toHaveLength(1);
    expect(fake.commands.map((c) => c.id)).toEqual(["resolve-active-note-embeds"]);
  });

  it("resolves the active note and shows the resolved length", async () => {
    const { fake } = await loadPlugin(fakeApp(vault, "A.md").app);
    expect(resolveCommand(fake)(false)).toBe(true);
    const expected = await resolveNote(vault, vault.file("A.md"));
    await vi.waitFor(() => expect(shim.Notice.shown).toHaveLength(1));
    expect(shim.Notice.shown[0]).toBe(
      `Vault RAG: "A" resolves to ${expected.text.length} characters (2 embedded notes, 0 warnings).`,
    );
  });

  it("offers the command only for a markdown note", async () => {
    const { app, state } = fakeApp(vault, null);
    const { fake } = await loadPlugin(app);
    expect(resolveCommand(fake)(true)).toBe(false);
    state.active = { path: "photo.png", extension: "png", diskPath: "", basename: "photo" };
    expect(resolveCommand(fake)(true)).toBe(false);
  });

  it("stops running work on unload", async () => {
    const { app, state } = fakeApp(vault, "A.md");
    const pending: (() => void)[] = [];
    let reads = 0;
    // The first read waits until released; the embedded notes are read at once.
    state.read = (file) =>
      reads++ === 0
        ? new Promise((resolve) => pending.push(() => resolve(vault.read(file))))
        : Promise.resolve(vault.read(file));
    const { plugin, fake } = await loadPlugin(app);
    resolveCommand(fake)(false);
    await vi.waitFor(() => expect(pending).toHaveLength(1));
    plugin.onunload();
    for (const release of pending.splice(0)) release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(shim.Notice.shown).toEqual([]);
  });

  it("loads saved settings, defaulting and normalising them", async () => {
    const { plugin } = await loadPlugin(fakeApp(vault, null).app, {
      sidecarUrl: "http://localhost:9000/",
      token: " secret ",
      unknown: 1,
    });
    expect(plugin.settings).toEqual({ sidecarUrl: "http://localhost:9000", token: "secret" });
    const { plugin: fresh } = await loadPlugin(fakeApp(vault, null).app, { sidecarUrl: "ftp://x" });
    expect(fresh.settings).toEqual(DEFAULT_SETTINGS);
  });

  it("saves valid settings from the tab and refuses an invalid URL", async () => {
    const { plugin, fake } = await loadPlugin(fakeApp(vault, null).app);
    const tab = fake.settingTabs[0] as unknown as shim.PluginSettingTab & { display(): void };
    tab.display();
    const [url, token] = shim.settingsIn(tab.containerEl);
    if (!url || !token) throw new Error("settings not shown");
    expect(token.texts[0]?.inputEl.type).toBe("password");

    await url.texts[0]?.type("not a url");
    expect(url.descEl.classes.has("vault-rag-setting-error")).toBe(true);
    expect(fake.data).toBeNull();

    await url.texts[0]?.type("https://rag.example:8443/");
    await token.texts[0]?.type("t0ken");
    expect(url.descEl.classes.has("vault-rag-setting-error")).toBe(false);
    expect(fake.data).toEqual({ sidecarUrl: "https://rag.example:8443", token: "t0ken" });
    expect(plugin.settings.sidecarUrl).toBe("https://rag.example:8443");
  });
});
