/**
 * The ask pane and the related-notes view in a plain browser page, for the real-browser test:
 * `npm run build:browser-test` bundles this file with `obsidian` aliased to `obsidian.ts` here
 * (the test shim, with a real CommonMark `MarkdownRenderer`) into test-output/pane.js (next to
 * pane.html and styles.css). Open
 *
 *   http://localhost:<port>/pane.html?url=http://127.0.0.1:8765&token=TOKEN[&mode=hybrid][&folder=F]
 *     [&ask=Q][&vault=DIR][&metadata=vault-metadata.json][&related=1][&launch=1&command=CMD]
 *
 * and the pane talks to that sidecar with the real client (fetch + SSE). What Obsidian would do
 * on a click is recorded instead: `openLinkText` calls and opened files are listed in
 * `[data-testid="opened-links"]` (one `li` each) and in `window.vaultRag.opened` (with the new-leaf
 * kind and `eState` line in `window.vaultRag.links`; `hover-link` events in `.hovers`).
 * `document.body.dataset.ready === "true"` once the views are mounted; with `&ask=Q` the pane asks
 * Q at once and `document.body.dataset.answered` becomes "true" when the answer has finished.
 *
 * The page also plays the rest of the workspace: the `textarea` `[data-testid="editor"]` is the
 * markdown editor of the active note ("Notes/Draft.md" at first; `window.vaultRag.openNote(path,
 * text)` opens another, which fires `active-leaf-change`), so "Insert at cursor" writes at its caret
 * and its selection is what "Ask about this note" sends; `requestSaveLayout` stores the view's state
 * in `localStorage`, which the next load gives back through `setState`, as Obsidian does with the
 * workspace layout. `&vault=DIR` is the vault's folder on disk (`FileSystemAdapter`).
 * `&metadata=URL` is the vault's metadata (`{notes: {path: {mtime, headings}}, resolvedLinks}`, made
 * by the test from the vault with the repository's own CachedMetadata generator): the
 * `metadataCache` the example questions and the links of "Ask about this note" read.
 * `&related=1` also mounts the related-notes view in `#related`; `&settings=1` the settings tab's
 * "Embedding model" section in `#settings` (with its confirm dialog). `&launch=1` gives the plugin a
 * launcher (the page's `__vaultRagSpawn`/`__vaultRagStop`/`__vaultRagRun`, which the test runner
 * exposes: they start real processes) and `&command=CMD` the "Sidecar command" setting, so the
 * empty state's "Start the sidecar" runs the real supervisor; `window.vaultRag.unload()` stops
 * what it started, as unloading the plugin does.
 *
 * `&remote=1` is the plugin on a phone: `Platform.isMobile` is set, no sidecar client or launcher
 * is made, and the pane asks through `MobileServices` (the sealed transport to a remote listener,
 * pairing from the empty state's "Connect to your desktop"); the device's id and key live in this
 * page's `localStorage` as its secret storage, so a reload stays paired. Only the notes listed in
 * `&metadata=` exist on this "phone": a citation of another one is reported (a Notice, listed in
 * `window.vaultRag.notices`), not opened. `&pair=URL,CODE` pairs at once, as the
 * `obsidian://vault-rag-pair` link does.
 */
import { type App, FileSystemAdapter, MarkdownView, Notice, Platform, TFile, WorkspaceLeaf } from "obsidian";

import { SidecarClient } from "../../src/client";
import { askToReindex } from "../../src/models/embeddingModal";
import { MobileServices } from "../../src/remote/mobile";
import { displayEmbeddingSection } from "../../src/models/embeddingSection";
import { DEFAULT_SETTINGS, normalizeFolder, normalizeSidecarUrl, type VaultRagSettings } from "../../src/settings";
import { serveCommandLine } from "../../src/sidecar/command";
import { SidecarLogModal } from "../../src/sidecar/logModal";
import type { Launcher, ProcessExit, SidecarSupervisor } from "../../src/sidecar/supervisor";
import { launchControls, StateListeners, supervisorFor } from "../../src/sidecar/wiring";
import { AskView } from "../../src/view/askView";
import { RelatedView } from "../../src/view/relatedView";

/** One `openLinkText` call: the link, the new-leaf kind (Ctrl/Cmd-click: "tab") and the line of `eState`. */
interface OpenedLink {
  linktext: string;
  newLeaf: unknown;
  line: number | null;
}

interface VaultMetadata {
  notes: Record<string, { mtime: number; headings: { heading: string; level: number }[] }>;
  resolvedLinks: Record<string, Record<string, number>>;
}

/** What the test runner exposes to the page (playwright's `exposeFunction`). */
interface ExposedLauncher {
  __vaultRagSpawn(id: string, argv: string[], cwd: string | null, env: Record<string, string>): Promise<void>;
  __vaultRagStop(id: string): Promise<void>;
  __vaultRagRun(argv: string[], cwd: string | null, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

declare global {
  interface Window {
    vaultRag?: {
      view: AskView;
      related: RelatedView | null;
      client: SidecarClient;
      settings: VaultRagSettings;
      supervisor: SidecarSupervisor | null;
      opened: string[];
      links: OpenedLink[];
      hovers: { source: string; linktext: string; scroll: number | null }[];
      errors: string[];
      /** `&remote=1`: the Notices shown. */
      notices?: string[];
      mobile?: MobileServices;
      openNote(path: string, text: string): void;
      showLog(): void;
      unload(): Promise<void>;
    };
    /** Where the test runner delivers a started process's output and exit. */
    __vaultRagLauncher?: { output(id: string, stream: "out" | "err", text: string): void; exit(id: string, exit: ProcessExit): void };
  }
}

/** Obsidian's editor over the page's textarea: `replaceSelection` writes at its caret. */
function textareaEditor(el: HTMLTextAreaElement) {
  return {
    replaceSelection: (text: string) => {
      el.setRangeText(text, el.selectionStart, el.selectionEnd, "end");
      el.dispatchEvent(new Event("input", { bubbles: true }));
    },
    getSelection: () => el.value.slice(el.selectionStart, el.selectionEnd),
    focus: () => el.focus(),
  };
}

/** The plugin's `Launcher` over the functions the test runner exposed: real processes there. */
function exposedLauncher(): Launcher {
  const exposed = window as unknown as ExposedLauncher;
  const processes = new Map<string, { onOutput: (stream: "out" | "err", text: string) => void; exit: (exit: ProcessExit) => void }>();
  window.__vaultRagLauncher = {
    output: (id, stream, text) => processes.get(id)?.onOutput(stream, text),
    exit: (id, exit) => processes.get(id)?.exit(exit),
  };
  let next = 0;
  return {
    spawn(argv, options, onOutput) {
      const id = `p${++next}`;
      let exit: (value: ProcessExit) => void = () => undefined;
      const exited = new Promise<ProcessExit>((resolve) => (exit = resolve));
      processes.set(id, { onOutput, exit });
      exposed.__vaultRagSpawn(id, argv, options.cwd, options.env).catch((error: unknown) => exit({ code: null, signal: null, error: `could not be started: ${String(error)}` }));
      return {
        exited,
        async stop() {
          await exposed.__vaultRagStop(id);
          await exited;
        },
      };
    },
    run: (argv, options) => exposed.__vaultRagRun(argv, options.cwd, options.env, options.timeoutMs),
  };
}

async function loadMetadata(url: string | null): Promise<VaultMetadata> {
  if (!url) return { notes: {}, resolvedLinks: {} };
  return (await (await fetch(url)).json()) as VaultMetadata;
}

async function main(): Promise<void> {
  const params = new URLSearchParams(window.location.search);
  // The token a started sidecar handed over outlives a reload, as it does in Obsidian's secret
  // storage; one per vault folder.
  const TOKEN_KEY = `vault-rag-e2e-token:${params.get("vault") ?? ""}`;
  const settings: VaultRagSettings = {
    ...DEFAULT_SETTINGS,
    sidecarUrl: normalizeSidecarUrl(params.get("url") ?? "") ?? DEFAULT_SETTINGS.sidecarUrl,
    token: params.get("token") ?? window.localStorage.getItem(TOKEN_KEY) ?? "",
    answerMode: params.get("mode") === "hybrid" ? "hybrid" : "strict",
    answersFolder: normalizeFolder(params.get("folder") ?? ""),
    sidecarCommand: params.get("command") ?? "",
  };
  const vaultPath = params.get("vault") || null;
  const metadata = await loadMetadata(params.get("metadata"));
  // One saved layout per sidecar: a page on another sidecar does not resume this one's thread.
  const LAYOUT_KEY = `vault-rag-e2e-layout:${settings.sidecarUrl}`;
  const opened: string[] = [];
  const links: OpenedLink[] = [];
  const hovers: { source: string; linktext: string; scroll: number | null }[] = [];
  const errors: string[] = [];
  const openedList = document.querySelector('[data-testid="opened-links"]');
  const record = (what: string) => {
    opened.push(what);
    const item = document.createElement("li");
    item.textContent = what;
    openedList?.appendChild(item);
  };
  const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
  const File = TFile as unknown as new (path: string, stat?: { mtime: number; size: number }) => TFile;
  const fileOf = (path: string) => new File(path, { mtime: metadata.notes[path]?.mtime ?? 0, size: 0 });
  // The editor's note (the last active markdown view); no note is the active leaf until
  // `openNote` (the pane has the focus), so the related view starts empty.
  let editorFile: TFile = new File("Notes/Draft.md");
  let activeFile: TFile | null = null;
  const app = {
    workspace: {
      openLinkText: async (linktext: string, _source: string, newLeaf?: unknown, state?: { eState?: { line?: number } }) => {
        const line = typeof state?.eState?.line === "number" ? state.eState.line : null;
        links.push({ linktext, newLeaf: newLeaf ?? false, line });
        record(line === null ? linktext : `${linktext} (line ${line + 1})`);
      },
      // The Page preview plugin's event: recorded.
      trigger: (name: string, data: { source: string; linktext: string; state?: { scroll?: number } }) => {
        if (name === "hover-link") hovers.push({ source: data.source, linktext: data.linktext, scroll: data.state?.scroll ?? null });
      },
      getLeaf: () => ({ openFile: async (file: { path: string }) => record(`file:${file.path}`) }),
      requestSaveLayout: () => window.localStorage.setItem(LAYOUT_KEY, JSON.stringify(view.getState())),
      on: (name: string, callback: (...args: unknown[]) => void) => {
        const set = listeners.get(name) ?? new Set();
        set.add(callback);
        listeners.set(name, set);
        return { detach: () => set.delete(callback) };
      },
      getActiveFile: () => activeFile,
      getActiveViewOfType: () => null, // the pane has the focus
      getMostRecentLeaf: () => noteLeaf,
    },
    // The sidecar wrote the note into the vault; here every path "exists" at once.
    // A shim `TFile`, so the views' `instanceof TFile` checks hold as in Obsidian.
    vault: {
      adapter: new (FileSystemAdapter as unknown as new (base: string) => FileSystemAdapter)(vaultPath ?? ""),
      getAbstractFileByPath: (path: string) => fileOf(path),
      getMarkdownFiles: () => Object.keys(metadata.notes).map(fileOf),
    },
    metadataCache: {
      // `&remote=1`: a phone holds the notes its sync brought (those of `&metadata=`).
      getFirstLinkpathDest: (linkpath: string) => {
        const path = linkpath.endsWith(".md") ? linkpath : `${linkpath}.md`;
        return metadata.notes[path] ? fileOf(path) : null;
      },
      getFileCache: (file: TFile) => (metadata.notes[file.path] ? { headings: metadata.notes[file.path]?.headings } : null),
      resolvedLinks: metadata.resolvedLinks,
      fileToLinktext: (file: TFile) => file.basename,
    },
  };
  // The shim's leaf and markdown view take the app and the editor (the real ones are Obsidian's).
  const Leaf = WorkspaceLeaf as unknown as new (app: unknown) => WorkspaceLeaf;
  const noteLeaf = new Leaf(app);
  const editorEl = document.querySelector<HTMLTextAreaElement>('[data-testid="editor"]');
  const editorLabel = document.querySelector<HTMLElement>('[data-testid="editor-note"]');
  let noteView: MarkdownView | null = null;
  if (editorEl !== null) {
    const View = MarkdownView as unknown as new (leaf: WorkspaceLeaf, editor: unknown, file: TFile) => MarkdownView;
    noteView = new View(noteLeaf, textareaEditor(editorEl), editorFile);
  }
  const remote = params.get("remote") === "1";
  let mobile: MobileServices | undefined;
  if (remote) {
    (Platform as { isMobile: boolean }).isMobile = true;
    document.body.classList.add("phone");
    const SECRETS = "vault-rag-e2e-secrets";
    const DATA = "vault-rag-e2e-remote-data";
    const stored = JSON.parse(window.localStorage.getItem(DATA) ?? "{}") as Partial<VaultRagSettings>;
    settings.remoteDevices = stored.remoteDevices ?? {};
    settings.remoteSecrets = {};
    const secrets = JSON.parse(window.localStorage.getItem(SECRETS) ?? "{}") as Record<string, string>;
    mobile = new MobileServices(app as unknown as App, () => settings, {
      save: async () => window.localStorage.setItem(DATA, JSON.stringify({ remoteDevices: settings.remoteDevices })),
      secrets: {
        getSecret: (id) => secrets[id] ?? null,
        setSecret: (id, value) => {
          secrets[id] = value;
          window.localStorage.setItem(SECRETS, JSON.stringify(secrets));
        },
      },
    });
  }
  const client = mobile?.client ?? new SidecarClient(() => ({ url: settings.sidecarUrl, token: settings.token }));
  let supervisor: SidecarSupervisor | null = null;
  let sidecar = undefined;
  const command = () => serveCommandLine(settings.sidecarCommand, vaultPath, settings.sidecarUrl);
  const configuredUrl = settings.sidecarUrl;
  if (params.get("launch") === "1") {
    const stateListeners = new StateListeners();
    supervisor = supervisorFor(client, {
      launcher: exposedLauncher(),
      command,
      cwd: () => vaultPath,
      saveToken: async (token) => {
        settings.token = token; // what the plugin saves in its settings (secret storage)
        window.localStorage.setItem(TOKEN_KEY, token);
      },
      useUrl: (url) => {
        settings.sidecarUrl = url ?? configuredUrl; // a `--port 0` sidecar's own port (Services.url)
      },
      onChange: (state) => {
        stateListeners.notify();
        if (state.kind === "running") void view.poller?.poll();
      },
      pollMs: 250,
    });
    const started = supervisor;
    sidecar = launchControls(started, stateListeners, command, () => showLog());
  }
  const showLog = () => {
    if (supervisor !== null) new SidecarLogModal(app as never, supervisor.log, () => (supervisor as SidecarSupervisor).state).open();
  };
  const reportError = (error: unknown) => errors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  const view = new AskView(new Leaf(app), mobile ? { ...mobile.viewHost, reportError } : { client, settings: () => settings, reportError, sidecar });
  document.getElementById("app")?.appendChild(view.containerEl);
  await view.onOpen();
  // `&settings=1`: the settings tab's "Embedding model" section in `#settings`, on the same client,
  // with the real confirm dialog (the shim's Modal) and the keys in this page's memory.
  if (params.get("settings") === "1") {
    const keys = new Map<string, string>();
    displayEmbeddingSection(document.getElementById("settings") as HTMLElement, {
      api: client,
      keys: { where: "secret storage", get: (id) => keys.get(id) ?? "", set: (id, value) => void keys.set(id, value) },
      confirm: (cost) => askToReindex(app as unknown as App, cost),
    });
  }
  let related: RelatedView | null = null;
  if (params.get("related") === "1") {
    related = new RelatedView(new Leaf(app), mobile ? { ...mobile.viewHost, reportError } : { client, reportError });
    document.getElementById("related")?.appendChild(related.containerEl);
    related.load();
    await related.onOpen();
  }
  const saved = window.localStorage.getItem(LAYOUT_KEY);
  if (saved !== null) await view.setState(JSON.parse(saved) as unknown, { history: false });
  window.vaultRag = {
    view,
    related,
    client,
    settings,
    supervisor,
    opened,
    links,
    hovers,
    errors,
    ...(mobile ? { mobile, notices: (Notice as unknown as { shown: string[] }).shown } : {}),
    openNote: (path, text) => {
      activeFile = editorFile = fileOf(path);
      if (noteView !== null) noteView.file = editorFile;
      if (editorEl !== null) editorEl.value = text;
      if (editorLabel !== null) editorLabel.textContent = path;
      for (const callback of listeners.get("active-leaf-change") ?? []) callback(noteLeaf);
    },
    showLog,
    unload: async () => {
      await view.onClose();
      await supervisor?.stop();
    },
  };
  const pair = params.get("pair");
  if (mobile && pair) {
    const [url, code] = pair.split(",");
    await mobile.pairFromLink({ url, code });
    await view.poller?.poll();
  }
  document.body.dataset.ready = "true";
  // `&ask=question`: ask at once (for a headless run without a driver).
  const question = params.get("ask");
  if (question) {
    await view.pane?.ask(question);
    document.body.dataset.answered = "true";
  }
}

void main();
