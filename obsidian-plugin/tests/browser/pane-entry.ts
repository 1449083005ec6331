/**
 * The ask pane in a plain browser page, for the real-browser test: `npm run build:browser-test`
 * bundles this file with `obsidian` aliased to the test shim into test-output/pane.js (next to
 * pane.html and styles.css). Open
 *
 *   http://localhost:<port>/pane.html?url=http://127.0.0.1:8765&token=TOKEN[&mode=hybrid][&folder=F][&ask=Q][&vault=DIR]
 *
 * and the pane talks to that sidecar with the real client (fetch + SSE). What Obsidian would
 * do on a click is recorded instead: `openLinkText` calls and opened files are listed in
 * `[data-testid="opened-links"]` (one `li` each) and in `window.vaultRag.opened`.
 * `document.body.dataset.ready === "true"` once the pane is mounted; with `&ask=Q` the pane asks Q
 * at once and `document.body.dataset.answered` becomes "true" when the answer has finished.
 *
 * The page also plays the rest of the workspace the view talks to: the `textarea`
 * `[data-testid="editor"]` is the markdown editor of the note "Notes/Draft.md" (the most recent
 * leaf, so "Insert at cursor" writes at its caret), and `requestSaveLayout` stores the view's
 * state in `localStorage`, which the next load of the page gives back through `setState`, as
 * Obsidian does with the workspace layout after a reload. `&vault=DIR` is the vault's folder
 * on disk (Obsidian's `FileSystemAdapter`), which the empty state names in `vault-rag serve`.
 */
import { FileSystemAdapter, MarkdownView, TFile, WorkspaceLeaf } from "obsidian";

import { SidecarClient } from "../../src/client";
import { DEFAULT_SETTINGS, normalizeFolder, normalizeSidecarUrl, type VaultRagSettings } from "../../src/settings";
import { AskView } from "../../src/view/askView";

/** One `openLinkText` call: the link, the new-leaf kind (Ctrl/Cmd-click: "tab") and the line of `eState`. */
interface OpenedLink {
  linktext: string;
  newLeaf: unknown;
  line: number | null;
}

declare global {
  interface Window {
    vaultRag?: {
      view: AskView;
      client: SidecarClient;
      opened: string[];
      links: OpenedLink[];
      hovers: { source: string; linktext: string; scroll: number | null }[];
      errors: string[];
    };
  }
}


/** Obsidian's editor over the page's textarea: `replaceSelection` writes at its caret. */
function textareaEditor(el: HTMLTextAreaElement) {
  return {
    replaceSelection: (text: string) => {
      el.setRangeText(text, el.selectionStart, el.selectionEnd, "end");
      el.dispatchEvent(new Event("input", { bubbles: true }));
    },
    focus: () => el.focus(),
  };
}

async function main(): Promise<void> {
  const params = new URLSearchParams(window.location.search);
  const settings: VaultRagSettings = {
    ...DEFAULT_SETTINGS,
    sidecarUrl: normalizeSidecarUrl(params.get("url") ?? "") ?? DEFAULT_SETTINGS.sidecarUrl,
    token: params.get("token") ?? "",
    answerMode: params.get("mode") === "hybrid" ? "hybrid" : "strict",
    answersFolder: normalizeFolder(params.get("folder") ?? ""),
  };
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
      on: () => ({}), // no other leaf ever becomes active on this page
      getActiveViewOfType: () => null, // the pane has the focus
      getMostRecentLeaf: () => noteLeaf,
    },
    // The sidecar wrote the note into the vault; here every path "exists" at once.
    // A shim `TFile`, so the view's `instanceof TFile` check holds as in Obsidian.
    vault: {
      adapter: new (FileSystemAdapter as unknown as new (base: string) => FileSystemAdapter)(params.get("vault") ?? ""),
      getAbstractFileByPath: (path: string) => new (TFile as unknown as new (path: string) => TFile)(path),
    },
  };
  // The shim's leaf and markdown view take the app and the editor (the real ones are Obsidian's).
  const noteLeaf = new (WorkspaceLeaf as unknown as new (app: unknown) => WorkspaceLeaf)(app);
  const editorEl = document.querySelector<HTMLTextAreaElement>('[data-testid="editor"]');
  if (editorEl !== null) {
    const View = MarkdownView as unknown as new (leaf: WorkspaceLeaf, editor: unknown, file: TFile) => MarkdownView;
    new View(noteLeaf, textareaEditor(editorEl), new (TFile as unknown as new (path: string) => TFile)("Notes/Draft.md"));
  }
  const client = new SidecarClient(() => ({ url: settings.sidecarUrl, token: settings.token }));
  // The shim's leaf takes the app (the real one is made by Obsidian).
  const Leaf = WorkspaceLeaf as unknown as new (app: unknown) => WorkspaceLeaf;
  const view = new AskView(new Leaf(app), {
    client,
    settings: () => settings,
    reportError: (error) => errors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
  });
  document.getElementById("app")?.appendChild(view.containerEl);
  await view.onOpen();
  const saved = window.localStorage.getItem(LAYOUT_KEY);
  if (saved !== null) await view.setState(JSON.parse(saved) as unknown, { history: false });
  window.vaultRag = { view, client, opened, links, hovers, errors };
  document.body.dataset.ready = "true";
  // `&ask=question`: ask at once (for a headless run without a driver).
  const question = params.get("ask");
  if (question) {
    await view.pane?.ask(question);
    document.body.dataset.answered = "true";
  }
}

void main();
