/**
 * The plugin's lifecycle against the `obsidian` shim: what onload registers, the resolve
 * command end to end on a fixture vault, the settings tab, layout-ready (events, status poll,
 * reconcile against a stand-in sidecar on 127.0.0.1) and onunload stopping work.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

import type { App, PluginManifest } from "obsidian";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { NotePayload } from "../src/client";
import VaultRagPlugin from "../src/main";
import { resolveNote } from "../src/resolver";
import { SETTINGS_DEBOUNCE_MS } from "../src/services";
import { TOKEN_SECRET_ID } from "../src/token";
import { DEFAULT_SETTINGS } from "../src/settings";
import { askAboutNoteCommand } from "../src/commands";
import { sha256Hex } from "../src/sync";
import * as shim from "./__mocks__/obsidian";
import { FIXTURES, type FixtureFile, FixtureVault } from "./helpers/fixtureVault";
import { answeredProof } from "./helpers/proofs";

const MANIFEST = { id: "vault-rag", name: "Vault RAG", version: "0.1.0", minAppVersion: "1.4.0" };

interface FakeApp {
  active: (FixtureFile & { basename: string }) | null;
  read: (file: FixtureFile) => Promise<string>;
  layoutReady: (() => unknown)[];
  handlers: Map<string, (...args: unknown[]) => unknown>;
}

function fakeApp(vault: FixtureVault, active: string | null) {
  const state: FakeApp = {
    active: active === null ? null : { ...vault.file(active), basename: path.basename(active, ".md") },
    read: async (file) => vault.read(file),
    layoutReady: [],
    handlers: new Map(),
  };
  const on = (source: string) => (name: string, callback: (...args: unknown[]) => unknown) => {
    state.handlers.set(`${source}:${name}`, callback);
    return { source, name };
  };
  const app = {
    // The debug flag: the resolver's command is registered (tests below drive it).
    loadLocalStorage: (key: string) => (key === "vault-rag-debug" ? "1" : null),
    saveLocalStorage: () => undefined,
    workspace: {
      getActiveFile: () => state.active,
      onLayoutReady: (callback: () => unknown) => state.layoutReady.push(callback),
      getLeavesOfType: () => [],
      getRightLeaf: () => null,
    },
    metadataCache: {
      getFirstLinkpathDest: (linkpath: string, source: string) => vault.getFirstLinkpathDest(linkpath, source),
      getFileCache: (file: FixtureFile) => vault.getFileCache(file),
      resolvedLinks: {},
      unresolvedLinks: {},
      on: on("metadataCache"),
    },
    vault: {
      cachedRead: (file: FixtureFile) => state.read(file),
      readBinary: async (file: FixtureFile) => new TextEncoder().encode(vault.read(file)).buffer,
      getMarkdownFiles: () => vault.notePaths().map((p) => vault.file(p)),
      getAbstractFileByPath: (p: string) => (vault.notePaths().includes(p) ? vault.file(p) : null),
      on: on("vault"),
    },
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

const servers: Server[] = [];
const plugins: VaultRagPlugin[] = [];


afterEach(async () => {
  for (const plugin of plugins.splice(0)) plugin.onunload();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  shim.Notice.shown.length = 0;
});

describe("VaultRagPlugin", () => {
  const vault = new FixtureVault(path.join(FIXTURES, "recursive-embed"));

  it("registers its settings tab, commands, view, ribbon icon and status bar item on load", async () => {
    const { fake, plugin } = await loadPlugin(fakeApp(vault, "A.md").app);
    plugins.push(plugin);
    expect(fake.settingTabs).toHaveLength(1);
    expect(fake.commands.map((c) => c.id)).toEqual([
      "resolve-active-note-embeds",
      "open-ask-pane",
      "ask-about-note",
      "open-related-notes",
      "reindex-vault",
      "show-sidecar-log", // no "start-sidecar": this stand-in cannot start programs
    ]);
    expect([...fake.views.keys()]).toEqual(["vault-rag-ask", "vault-rag-related"]);
    // Both views emit hover-link for the Page preview plugin.
    expect([...fake.hoverLinkSources.keys()]).toEqual(["vault-rag-ask", "vault-rag-related"]);
    expect(fake.ribbonIcons.map((r) => r.title)).toEqual(["Ask the vault"]);
    expect(fake.statusBarItems).toHaveLength(1);
    expect((fake.statusBarItems[0] as shim.FakeElement).textContent).toBe("RAG: connecting…");
    expect(fake.events).toEqual([]); // vault events only after layout-ready
  });

  it("keeps the resolver's debug command out of the palette without the debug flag", async () => {
    const { app } = fakeApp(vault, "A.md");
    Object.assign(app, { loadLocalStorage: () => null });
    const { fake, plugin } = await loadPlugin(app);
    plugins.push(plugin);
    expect(fake.commands.map((c) => c.id)).not.toContain("resolve-active-note-embeds");
    expect(fake.commands.map((c) => c.id)).toContain("open-ask-pane");
  });

  it("resolves the active note and shows the resolved length", async () => {
    const { fake, plugin } = await loadPlugin(fakeApp(vault, "A.md").app);
    plugins.push(plugin);
    expect(resolveCommand(fake)(false)).toBe(true);
    const expected = await resolveNote(vault, vault.file("A.md"));
    await vi.waitFor(() => expect(shim.Notice.shown).toHaveLength(1));
    expect(shim.Notice.shown[0]).toBe(
      `Vault RAG: "A" resolves to ${expected.text.length} characters (2 embedded notes, 0 warnings).`,
    );
  });

  it("offers the command only for a markdown note", async () => {
    const { app, state } = fakeApp(vault, null);
    const { fake, plugin } = await loadPlugin(app);
    plugins.push(plugin);
    expect(resolveCommand(fake)(true)).toBe(false);
    state.active = { path: "photo.png", extension: "png", diskPath: "", basename: "photo" };
    expect(resolveCommand(fake)(true)).toBe(false);
  });

  it("tests the connection from the settings; no start setting where programs cannot be started", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve)); // nothing listens there now
    const { fake, plugin } = await loadPlugin(fakeApp(vault, null).app, { sidecarUrl: `http://127.0.0.1:${port}` });
    plugins.push(plugin);
    const tab = fake.settingTabs[0] as unknown as shim.PluginSettingTab & { display(): void };
    tab.display();
    const settings = shim.settingsIn(tab.containerEl);
    expect(settings.map((s) => s.name)).toEqual([
      "Sidecar URL",
      "Token",
      "Answer mode",
      "Excluded folders",
      "Answers folder",
      "Models",
      "In use",
      "Answers come from",
      "Model server",
      "API key",
      "Chat model",
      "Test the model",
      "Web search",
      "Tavily API key",
      "Allowed web domains",
      "Embedding model",
      "Sidecar",
      "Test connection",
    ]);
    const test = settings.find((s) => s.name === "Test connection") as shim.Setting;
    await test.buttons[0]?.click();
    expect(test.desc).toBe(
      `Nothing answers at http://127.0.0.1:${port}. Start the sidecar (vault-rag serve --vault /path/to/your/vault --port ${port}), ` +
        'or turn on "Start the sidecar with Obsidian".',
    );
  });

  it("offers \"Ask about this note\" for a markdown note and opens the pane with it", async () => {
    const opened: unknown[] = [];
    let active: { extension: string } | null = { extension: "md" };
    const paneView = { kind: "the ask view" };
    const leaf = { view: paneView };
    const app = {
      workspace: {
        getActiveFile: () => active,
        getLeavesOfType: (type: string) => (type === "vault-rag-ask" ? [leaf] : []),
        revealLeaf: async () => undefined,
      },
    } as unknown as App;
    const command = askAboutNoteCommand(app, "vault-rag-ask", (view) => opened.push(view));
    expect(command.checkCallback?.(true)).toBe(true);
    command.checkCallback?.(false);
    await vi.waitFor(() => expect(opened).toEqual([paneView]));
    active = { extension: "canvas" };
    expect(command.checkCallback?.(true)).toBe(false);
    active = null;
    expect(command.checkCallback?.(true)).toBe(false);
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
      answerMode: "hybrid",
      excludedFolders: ["/Private/", "Templates", "", 3],
      answersFolder: "/Answers/",
      unknown: 1,
    });
    plugins.push(plugin);
    expect(plugin.settings).toEqual({
      sidecarUrl: "http://localhost:9000",
      token: "secret",
      answerMode: "hybrid",
      excludedFolders: ["Private", "Templates"],
      answersFolder: "Answers",
      startSidecar: false,
      sidecarCommand: "",
      sidecarProgram: "",
      allowRemote: false,
      remoteListen: "0.0.0.0:8766",
      remoteDevices: {},
      remoteSecrets: {},
      chatSource: "sidecar",
      chatBaseUrl: "",
      chatModel: "",
      webDomains: [],
    });
    const { plugin: fresh } = await loadPlugin(fakeApp(vault, null).app, { sidecarUrl: "ftp://x", answerMode: "web" });
    plugins.push(fresh);
    expect(fresh.settings).toEqual(DEFAULT_SETTINGS);
  });

  it("saves valid settings from the tab and refuses an invalid URL", async () => {
    const { plugin, fake } = await loadPlugin(fakeApp(vault, null).app);
    plugins.push(plugin);
    const tab = fake.settingTabs[0] as unknown as shim.PluginSettingTab & { display(): void };
    tab.display();
    const [url, token, mode, excluded, answers] = shim.settingsIn(tab.containerEl);
    if (!url || !token || !mode || !excluded || !answers) throw new Error("settings not shown");
    expect(token.texts[0]?.inputEl.type).toBe("password");

    await url.texts[0]?.type("not a url");
    expect(url.descEl.classes.has("vault-rag-setting-error")).toBe(true);
    expect(fake.data).toBeNull();

    await url.texts[0]?.type("https://rag.example:8443/");
    await token.texts[0]?.type("t0ken");
    expect([...((mode.texts[0] as shim.DropdownComponent).options.keys())]).toEqual(["strict", "hybrid"]);
    await mode.texts[0]?.type("hybrid");
    await excluded.texts[0]?.type("Private\n/Daily/\n\nPrivate");
    await answers.texts[0]?.type(" UE/ ");
    expect(url.descEl.classes.has("vault-rag-setting-error")).toBe(false);
    expect(fake.data).toEqual({
      sidecarUrl: "https://rag.example:8443",
      token: "t0ken",
      answerMode: "hybrid",
      excludedFolders: ["Private", "Daily"],
      answersFolder: "UE",
      startSidecar: false,
      sidecarCommand: "",
      sidecarProgram: "",
      allowRemote: false,
      remoteListen: "0.0.0.0:8766",
      remoteDevices: {},
      remoteSecrets: {},
      chatSource: "sidecar",
      chatBaseUrl: "",
      chatModel: "",
      webDomains: [],
      sync: { ops: [], upserts: [], known: {} }, // the sync queue, kept across reloads
    });
    expect(plugin.settings.sidecarUrl).toBe("https://rag.example:8443");
  });

  it("on layout-ready follows vault events, polls the status and reconciles with the sidecar", async () => {
    const puts: NotePayload[][] = [];
    const changed: unknown[] = [];
    const seen: string[] = [];
    const aHash = await sha256Hex((await buildExpected(vault, "A.md")).content);
    const server = createServer((req, res) => {
      if (answeredProof(req, res, "tok")) return; // it proves it holds the token first
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        res.setHeader("Content-Type", "application/json");
        if (req.url === "/v1/notes/hashes") res.end(JSON.stringify({ algorithm: "sha256", hashes: { "A.md": aHash, "Old.md": "x" } }));
        else if (req.url === "/v1/status") res.end(JSON.stringify({ notes: 3, chunks: 9, embedded: 9, pending: 0 }));
        else if (req.url === "/v1/notes" && req.method === "PUT") {
          puts.push((JSON.parse(body) as { notes: NotePayload[] }).notes);
          res.end("{}");
        } else if (req.url === "/v1/notes/changed") {
          changed.push(JSON.parse(body));
          res.end(JSON.stringify({ results: [], indexed: 1, deleted: 0 }));
        } else res.end("{}");
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const { app, state } = fakeApp(vault, null);
    const { plugin, fake } = await loadPlugin(app, { sidecarUrl: url, token: "tok" });
    plugins.push(plugin);
    for (const ready of state.layoutReady) ready();
    expect([...state.handlers.keys()].sort()).toEqual([
      "metadataCache:changed",
      "metadataCache:deleted",
      "metadataCache:resolve",
      "vault:create",
      "vault:delete",
      "vault:modify",
      "vault:rename",
    ]);
    expect(fake.events).toHaveLength(9); // 5 for notes, 4 for PDFs and canvases

    await vi.waitFor(() => expect(puts.length).toBeGreaterThan(0), { timeout: 15_000 }); // a loaded CI box
    // A.md is current on the sidecar; the other notes are posted, resolved; Old.md is deleted.
    const posted = puts.flat();
    expect(posted.map((n) => n.path).sort()).toEqual(vault.notePaths().filter((p) => p !== "A.md").sort());
    for (const note of posted) expect(note).toEqual(await buildExpected(vault, note.path));
    expect(seen).toContain("DELETE /v1/notes Bearer tok");
    await vi.waitFor(() => expect((fake.statusBarItems[0] as shim.FakeElement).textContent).toBe("RAG: 3 notes"), {
      timeout: 15_000,
    });
    expect(shim.Notice.shown).toEqual([]);
    // A PDF saved into the vault: its path goes to POST /v1/notes/changed (never its bytes).
    const pdf = new (shim.TFile as unknown as new (path: string) => shim.TFile)("Papers/Manual.pdf");
    state.handlers.get("vault:modify")?.(pdf);
    await vi.waitFor(() => expect(changed).toEqual([{ paths: ["Papers/Manual.pdf"] }]), { timeout: 15_000 });
  });

  /** A stand-in sidecar: counts requests by "METHOD path"; `put` answers each PUT /v1/notes;
   * it proves it holds `token` (the one in the plugin's settings, when one is). */
  async function standIn(put: (notes: NotePayload[]) => number = () => 200, token = "tok") {
    const counts = new Map<string, number>();
    const order: string[] = [];
    const authorized: string[] = [];
    const excludes: unknown[] = [];
    const server = createServer((req, res) => {
      if (answeredProof(req, res, token)) return;
      const key = `${req.method} ${req.url}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      order.push(key);
      authorized.push(`${key} ${req.headers.authorization}`);
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        res.setHeader("Content-Type", "application/json");
        if (req.url === "/v1/notes/hashes") res.end(JSON.stringify({ algorithm: "sha256", hashes: {} }));
        else if (req.url === "/v1/status") res.end(JSON.stringify({ notes: 3, chunks: 9, embedded: 9, pending: 0 }));
        else if (key === "PUT /v1/notes") {
          const status = put((JSON.parse(body) as { notes: NotePayload[] }).notes);
          res.statusCode = status;
          const bodies: Record<number, unknown> = {
            413: { code: "body_too_large", message: "too large" },
            404: { code: "no_file", message: "1 note(s) have no file in the sidecar's vault; nothing was stored" },
          };
          res.end(JSON.stringify(bodies[status] ?? {}));
        } else if (key === "PUT /v1/settings/exclude") {
          const { exclude } = JSON.parse(body) as { exclude: string[] };
          excludes.push(exclude);
          res.end(JSON.stringify({ exclude, configured: [], removed: 0, queued: 0 }));
        } else res.end("{}");
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts, order, excludes, authorized };
  }

  /** Settings under which the plugin, once the layout is ready, polls, reconciles and pushes
   * the excluded folders and the chat model, all with the stored token. */
  const pushing = (url: string) => ({
    sidecarUrl: url,
    token: "tok",
    excludedFolders: ["Private"],
    chatSource: "plugin",
    chatBaseUrl: "http://127.0.0.1:11434/v1",
    chatModel: "llama3",
  });

  it("sends the stored token to a sidecar that proves it holds it: poller, sync, model and exclusion pushes", async () => {
    const { url, authorized } = await standIn();
    const { app, state } = fakeApp(vault, null);
    const { plugin, fake } = await loadPlugin(app, pushing(url));
    plugins.push(plugin);
    for (const ready of state.layoutReady) ready();
    const wanted = ["GET /v1/status", "GET /v1/notes/hashes", "PUT /v1/notes", "PUT /v1/settings/exclude", "PUT /v1/settings/models"];
    await vi.waitFor(() => expect(wanted.filter((w) => !authorized.includes(`${w} Bearer tok`))).toEqual([]), { timeout: 15_000 });
    expect(authorized.filter((line) => !line.endsWith(" Bearer tok"))).toEqual([]);
    await vi.waitFor(() => expect((fake.statusBarItems[0] as shim.FakeElement).textContent).toBe("RAG: 3 notes"), { timeout: 15_000 });
  });

  it("a squatter holding the port while a token is stored never receives it (issue 31, defect 5)", async () => {
    const requests: { path: string; auth: string | undefined }[] = [];
    const squatter = createServer((req, res) => {
      requests.push({ path: req.url ?? "", auth: req.headers.authorization });
      req.resume();
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ status: "ok" }));
    });
    servers.push(squatter);
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    const port = (squatter.address() as AddressInfo).port;
    const { app, state } = fakeApp(vault, null);
    const { plugin, fake } = await loadPlugin(app, pushing(`http://127.0.0.1:${port}`));
    plugins.push(plugin);
    for (const ready of state.layoutReady) ready();
    const status = fake.statusBarItems[0] as shim.FakeElement;
    await vi.waitFor(() => expect(status.textContent).toBe("RAG: token not sent"), { timeout: 15_000 });
    // Settings typed later (a push of the new exclusions and model) fare no better.
    const tab = fake.settingTabs[0] as unknown as shim.PluginSettingTab & { display(): void };
    tab.display();
    await shim.settingsIn(tab.containerEl)[3]?.texts[0]?.type("Private\nDaily");
    await new Promise((resolve) => setTimeout(resolve, SETTINGS_DEBOUNCE_MS + 1_000));
    expect(requests.length).toBeGreaterThan(1);
    expect(requests.filter((r) => r.auth !== undefined)).toEqual([]);
    expect(requests.filter((r) => !r.path.startsWith("/v1/health?challenge="))).toEqual([]); // only asked to prove itself
    expect(status.attributes.get("aria-label")).toContain(`Something else is answering on port ${port}`);
    expect(shim.Notice.shown).toEqual([
      `Vault RAG: what answers at http://127.0.0.1:${port} cannot prove it holds this vault's token, so the token was not sent. See the status bar.`,
    ]);
  });

  it("pushes the excluded folders to the sidecar, then reconciles once after typing, not per keystroke", async () => {
    const { url, counts, order, excludes } = await standIn();
    const { app, state } = fakeApp(vault, null);
    const { plugin, fake } = await loadPlugin(app, { sidecarUrl: url });
    plugins.push(plugin);
    for (const ready of state.layoutReady) ready();
    await vi.waitFor(() => expect(counts.get("PUT /v1/notes")).toBeGreaterThan(0), { timeout: 15_000 });
    expect(counts.get("GET /v1/notes/hashes")).toBe(1);

    const tab = fake.settingTabs[0] as unknown as shim.PluginSettingTab & { display(): void };
    tab.display();
    const excluded = shim.settingsIn(tab.containerEl)[3];
    for (const typed of ["P", "Pr", "Pri", "Priv", "Priva", "Privat", "Private"]) await excluded?.texts[0]?.type(typed);
    expect(plugin.settings.excludedFolders).toEqual(["Private"]);
    await new Promise((resolve) => setTimeout(resolve, SETTINGS_DEBOUNCE_MS + 1_000));
    expect(counts.get("GET /v1/notes/hashes")).toBe(2); // the start-up reconcile + one
    // The sidecar owns the exclusions: told at start and once after typing, each time before
    // the reconcile that compares the vault with its index.
    expect(excludes).toEqual([[], ["Private"]]);
    const pushes = order.flatMap((key, i) => (key === "PUT /v1/settings/exclude" ? [i] : []));
    const reconciles = order.flatMap((key, i) => (key === "GET /v1/notes/hashes" ? [i] : []));
    expect(pushes.length).toBe(2);
    expect(pushes[0]).toBeLessThan(reconciles[0] as number);
    expect(pushes[1]).toBeLessThan(reconciles[1] as number);
    expect(pushes[1]).toBeGreaterThan(reconciles[0] as number);
  });

  it("reports a note too large to index in the status bar and a notice, with its name", async () => {
    const { url } = await standIn((notes) => (notes.some((n) => n.path === "B.md") ? 413 : 200));
    const { app, state } = fakeApp(vault, null);
    const { plugin, fake } = await loadPlugin(app, { sidecarUrl: url });
    plugins.push(plugin);
    for (const ready of state.layoutReady) ready();
    const status = fake.statusBarItems[0] as shim.FakeElement;
    await vi.waitFor(() => expect(status.textContent).toBe("RAG: 3 notes · 1 too large"), { timeout: 15_000 });
    expect(status.attributes.get("aria-label")).toContain("Not indexed, too large: B");
    expect(shim.Notice.shown.filter((m) => m.includes("too large"))).toEqual([
      expect.stringMatching(/^Vault RAG: "B" is too large to index \(\d+ kB\); it was not sent\.$/),
    ]);
  });

  it("says once when the sidecar has no file for the notes it is sent (it serves another folder)", async () => {
    const { url } = await standIn(() => 404);
    const { app, state } = fakeApp(vault, null);
    const { plugin } = await loadPlugin(app, { sidecarUrl: url });
    plugins.push(plugin);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    for (const ready of state.layoutReady) ready();
    await vi.waitFor(() => expect(warn.mock.calls.length).toBeGreaterThanOrEqual(vault.notePaths().length), { timeout: 15_000 });
    const shown = shim.Notice.shown.filter((m) => m.includes("no file"));
    expect(shown).toHaveLength(1); // one notice, not one per note
    expect(shown[0]).toMatch(/^Vault RAG: the sidecar has no file ".+\.md" in its vault, so it was not indexed\. Is vault-rag serve running with --vault set to this vault's folder\?$/);
    warn.mockRestore();
  });

  it("keeps the token in the app's secret storage when it has one, moving a plain token there", async () => {
    const secrets = new Map<string, string>();
    const { url } = await standIn();
    const { app } = fakeApp(vault, null);
    const secretStorage = {
      getSecret: (id: string) => secrets.get(id) ?? null,
      setSecret: (id: string, secret: string) => void secrets.set(id, secret),
    };
    Object.assign(app, { secretStorage });
    const { plugin, fake } = await loadPlugin(app, { sidecarUrl: url, token: "plain-tok" });
    plugins.push(plugin);
    expect(secrets.get(TOKEN_SECRET_ID)).toBe("plain-tok");
    expect((fake.data as { token: string }).token).toBe(""); // no longer in data.json
    expect(plugin.settings.token).toBe("plain-tok");

    // Typed into the tab: secret storage, never data.json.
    const tab = fake.settingTabs[0] as unknown as shim.PluginSettingTab & { display(): void };
    tab.display();
    const token = shim.settingsIn(tab.containerEl)[1];
    expect(token?.desc).toContain("secret storage");
    await token?.texts[0]?.type("new-tok");
    expect(secrets.get(TOKEN_SECRET_ID)).toBe("new-tok");
    expect(JSON.stringify(fake.data)).not.toContain("new-tok");

    // A restart reads it back from secret storage.
    const again = await loadPlugin(app, fake.data);
    plugins.push(again.plugin);
    expect(again.plugin.settings.token).toBe("new-tok");
  });

  it("keeps the chat key in secret storage and the sidecar command on this device, never in data.json", async () => {
    const secrets = new Map<string, string>();
    const local = new Map<string, unknown>();
    const { url } = await standIn();
    const { app } = fakeApp(vault, null);
    Object.assign(app, {
      secretStorage: { getSecret: (id: string) => secrets.get(id) ?? null, setSecret: (id: string, s: string) => void secrets.set(id, s) },
      loadLocalStorage: (key: string) => local.get(key) ?? null,
      saveLocalStorage: (key: string, value: unknown) => void (value === null ? local.delete(key) : local.set(key, value)),
    });
    const { plugin, fake } = await loadPlugin(app, {
      sidecarUrl: url,
      sidecarCommand: "/opt/rag/bin/vault-rag serve --vault /v",
      sidecarProgram: "/home/me/.local/bin/vault-rag",
    });
    plugins.push(plugin);
    expect(local.get("vault-rag-sidecar-command")).toBe("/opt/rag/bin/vault-rag serve --vault /v");
    // The program's path is this computer's too: kept on the device, not in data.json.
    expect(local.get("vault-rag-sidecar-program")).toBe("/home/me/.local/bin/vault-rag");
    expect((fake.data as { sidecarProgram: string }).sidecarProgram).toBe("");
    expect(plugin.settings.sidecarProgram).toBe("/home/me/.local/bin/vault-rag");
    expect((fake.data as { sidecarCommand: string }).sidecarCommand).toBe(""); // moved out of the synced file
    expect(plugin.settings.sidecarCommand).toBe("/opt/rag/bin/vault-rag serve --vault /v");

    const tab = fake.settingTabs[0] as unknown as shim.PluginSettingTab & { display(): void };
    tab.display();
    const key = shim.settingsIn(tab.containerEl).find((s) => s.name === "API key");
    expect(key?.desc).toContain("secret storage");
    await key?.texts[0]?.type(" sk-chat-1 ");
    expect(secrets.get("vault-rag-chat-api-key")).toBe("sk-chat-1");
    expect(JSON.stringify(fake.data)).not.toContain("sk-chat-1");

    const again = await loadPlugin(app, fake.data);
    plugins.push(again.plugin);
    expect(again.plugin.settings.sidecarCommand).toBe("/opt/rag/bin/vault-rag serve --vault /v");
    expect(again.plugin.settings.sidecarProgram).toBe("/home/me/.local/bin/vault-rag");
  });

  it("moves the sync state out of data.json into files of its own in the plugin folder", async () => {
    const files = new Map<string, string>();
    const { app } = fakeApp(vault, null);
    Object.assign(app.vault, {
      configDir: ".obsidian",
      adapter: {
        read: async (p: string) => files.get(p) ?? "",
        write: async (p: string, d: string) => void files.set(p, d),
        exists: async (p: string) => files.has(p),
      },
    });
    const sync = { ops: [{ kind: "delete", path: "Gone.md" }], upserts: ["B.md"], known: { "A.md": [1, 2, "abcdef0123456789"] } };
    const { plugin, fake } = await loadPlugin(app, { sync });
    plugins.push(plugin);
    expect(fake.data).not.toHaveProperty("sync");
    expect(JSON.parse(files.get(".obsidian/plugins/vault-rag/sync-queue.json") ?? "{}")).toEqual({ ops: sync.ops, upserts: ["B.md"] });
    expect(JSON.parse(files.get(".obsidian/plugins/vault-rag/sync-known.json") ?? "{}")).toEqual({ known: sync.known });
    const again = await loadPlugin(app, fake.data);
    plugins.push(again.plugin);
    expect(again.plugin.services?.sync.persisted).toEqual(sync); // read back from the files
  });

  it("keeps the token in data.json on an app older than secret storage (1.11.4)", async () => {
    const secrets = new Map<string, string>();
    const { app } = fakeApp(vault, null);
    Object.assign(app, {
      secretStorage: { getSecret: (id: string) => secrets.get(id) ?? null, setSecret: (id: string, s: string) => void secrets.set(id, s) },
    });
    shim.apiVersion.current = "1.10.0";
    try {
      const { plugin, fake } = await loadPlugin(app, { token: "plain-tok" });
      plugins.push(plugin);
      expect(plugin.settings.token).toBe("plain-tok");
      await plugin.saveSettings();
      expect((fake.data as { token: string }).token).toBe("plain-tok");
      expect(secrets.size).toBe(0);
    } finally {
      shim.apiVersion.current = "1.13.1";
    }
  });

  it("shows one notice when the sidecar cannot be reached", async () => {
    const { app, state } = fakeApp(vault, null);
    const { plugin, fake } = await loadPlugin(app, { sidecarUrl: "http://127.0.0.1:9" });
    plugins.push(plugin);
    for (const ready of state.layoutReady) ready();
    await vi.waitFor(() => expect((fake.statusBarItems[0] as shim.FakeElement).textContent).toBe("RAG: offline"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(shim.Notice.shown).toHaveLength(1);
    expect(shim.Notice.shown[0]).toContain("cannot reach the sidecar at http://127.0.0.1:9");
  });
});

/** What the plugin should post for a fixture note: its resolved text behind its frontmatter. */
async function buildExpected(vault: FixtureVault, notePath: string): Promise<NotePayload> {
  const resolved = await resolveNote(vault, vault.file(notePath));
  const raw = readFileSync(path.join(vault.caseDir, "vault", notePath), "utf8");
  const fm = vault.getFileCache(vault.file(notePath))?.frontmatterPosition;
  const head = fm ? `${raw.split("\n").slice(0, fm.end.line + 1).join("\n")}\n` : "";
  return { path: notePath, content: head + resolved.text, embeds: resolved.dependencies, mtime: expect.any(Number) as unknown as number };
}
