/**
 * A small runtime stand-in for the `obsidian` module in tests (vitest.config.mts aliases it):
 * the npm package holds type definitions only. It implements just what src/ uses, records
 * what the plugin registers, and lets tests drive text inputs. Type checking still uses the
 * real definitions in node_modules/obsidian.
 */
import { resolveSubpathLike } from "../../src/resolver/subpath";

/** Obsidian's `resolveSubpath`, with the same semantics as the resolver's own. */
export const resolveSubpath = resolveSubpathLike;

/** The few HTMLElement helpers Obsidian adds that src/ calls (for tests without a DOM). */
export class FakeElement {
  readonly classes = new Set<string>();
  readonly attributes = new Map<string, string>();
  readonly listeners = new Map<string, (() => void)[]>();
  children: FakeElement[] = [];
  type = "text";
  textContent = "";

  empty(): void {
    this.children = [];
  }

  toggleClass(name: string, on: boolean): void {
    if (on) this.classes.add(name);
    else this.classes.delete(name);
  }

  addClass(name: string): void {
    this.classes.add(name);
  }

  setText(text: string): void {
    this.textContent = text;
  }

  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }

  addEventListener(type: string, listener: () => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  /** Test hook: run the listeners of `type`. */
  dispatch(type: string): void {
    for (const listener of this.listeners.get(type) ?? []) listener();
  }
}

/**
 * A real DOM element with the Obsidian helpers src/ uses (`empty`, `addClass`, `toggleClass`,
 * `setText`; the real definitions type them on every HTMLElement), where a DOM exists
 * (happy-dom, a browser).
 */
export function obsidianElement(doc: Document = document, tag = "div"): HTMLElement {
  const el = doc.createElement(tag);
  el.empty = () => {
    while (el.firstChild) el.removeChild(el.firstChild);
  };
  el.addClass = (...names: string[]) => el.classList.add(...names.flat());
  el.toggleClass = (name: string | string[], on: boolean) => {
    for (const n of [name].flat()) el.classList.toggle(n, on);
  };
  el.setText = (text: string | DocumentFragment) => {
    el.textContent = typeof text === "string" ? text : (text.textContent ?? "");
  };
  return el;
}

function someElement(): FakeElement | HTMLElement {
  return typeof document === "undefined" ? new FakeElement() : obsidianElement();
}

export class Notice {
  static readonly shown: string[] = [];

  constructor(
    readonly message: string,
    readonly duration?: number,
  ) {
    Notice.shown.push(message);
  }
}

type ChangeHandler = (value: string) => unknown;

export class TextComponent {
  readonly inputEl = new FakeElement();
  value = "";
  placeholder = "";
  private handler: ChangeHandler | null = null;

  setPlaceholder(placeholder: string): this {
    this.placeholder = placeholder;
    return this;
  }

  setValue(value: string): this {
    this.value = value;
    return this;
  }

  getValue(): string {
    return this.value;
  }

  onChange(handler: ChangeHandler): this {
    this.handler = handler;
    return this;
  }

  /** Test hook: what typing `value` into the field does. */
  async type(value: string): Promise<void> {
    this.value = value;
    await this.handler?.(value);
  }
}

export class Setting {
  readonly settingEl = new FakeElement();
  readonly descEl = new FakeElement();
  name = "";
  desc = "";
  readonly texts: TextComponent[] = [];

  constructor(containerEl: FakeElement) {
    containerEl.children.push(this.settingEl);
    settingsOf.set(containerEl, [...(settingsOf.get(containerEl) ?? []), this]);
  }

  setName(name: string): this {
    this.name = name;
    return this;
  }

  setDesc(desc: string): this {
    this.desc = desc;
    return this;
  }

  heading = false;

  setHeading(): this {
    this.heading = true;
    return this;
  }

  addText(build: (text: TextComponent) => unknown): this {
    const text = new TextComponent();
    this.texts.push(text);
    build(text);
    return this;
  }

  addTextArea(build: (text: TextComponent) => unknown): this {
    return this.addText(build);
  }

  addDropdown(build: (dropdown: DropdownComponent) => unknown): this {
    const dropdown = new DropdownComponent();
    this.texts.push(dropdown);
    build(dropdown);
    return this;
  }

  readonly toggles: ToggleComponent[] = [];
  readonly buttons: ButtonComponent[] = [];

  addToggle(build: (toggle: ToggleComponent) => unknown): this {
    const toggle = new ToggleComponent();
    this.toggles.push(toggle);
    build(toggle);
    return this;
  }

  addButton(build: (button: ButtonComponent) => unknown): this {
    const button = new ButtonComponent();
    this.buttons.push(button);
    build(button);
    return this;
  }
}

export class ToggleComponent {
  value = false;
  private handler: ((value: boolean) => unknown) | null = null;

  setValue(value: boolean): this {
    this.value = value;
    return this;
  }

  getValue(): boolean {
    return this.value;
  }

  onChange(handler: (value: boolean) => unknown): this {
    this.handler = handler;
    return this;
  }

  /** Test hook: what flipping the toggle does. */
  async toggle(value: boolean): Promise<void> {
    this.value = value;
    await this.handler?.(value);
  }
}

export class ButtonComponent {
  text = "";
  private handler: (() => unknown) | null = null;

  setButtonText(text: string): this {
    this.text = text;
    return this;
  }

  setCta(): this {
    return this;
  }

  onClick(handler: () => unknown): this {
    this.handler = handler;
    return this;
  }

  /** Test hook: a click. */
  async click(): Promise<void> {
    await this.handler?.();
  }
}

export class DropdownComponent extends TextComponent {
  readonly options = new Map<string, string>();
  /** `selectEl.empty()` removes the options, as on the real element. */
  readonly selectEl: FakeElement = Object.assign(new FakeElement(), { empty: () => this.options.clear() });

  addOption(value: string, display: string): this {
    this.options.set(value, display);
    return this;
  }
}

const settingsOf = new WeakMap<FakeElement, Setting[]>();

/** Test hook: the `Setting`s created in a container, in order. */
export function settingsIn(containerEl: FakeElement): Setting[] {
  return settingsOf.get(containerEl) ?? [];
}

export interface FakeCommand {
  id: string;
  name: string;
  checkCallback?: (checking: boolean) => boolean | undefined;
  callback?: () => unknown;
}

/** Obsidian's `Component`: children and cleanup callbacks, released on unload. */
export class Component {
  loaded = false;
  private readonly children: Component[] = [];
  private readonly cleanups: (() => unknown)[] = [];

  load(): void {
    this.loaded = true;
    this.onload();
  }

  onload(): void {}

  unload(): void {
    if (!this.loaded) return;
    this.loaded = false;
    for (const child of this.children.splice(0)) child.unload();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.onunload();
  }

  onunload(): void {}

  addChild<T extends Component>(child: T): T {
    this.children.push(child);
    if (this.loaded) child.load();
    return child;
  }

  register(cleanup: () => unknown): void {
    this.cleanups.push(cleanup);
  }

  registerEvent(ref: unknown): void {
    this.register(() => (ref as { detach?: () => void }).detach?.());
  }

  registerDomEvent(el: FakeElement | HTMLElement, type: string, callback: () => void): void {
    el.addEventListener(type, callback);
    this.register(() => (el as { removeEventListener?: (t: string, c: () => void) => void }).removeEventListener?.(type, callback));
  }

  registerInterval(id: number): number {
    this.register(() => window.clearInterval(id));
    return id;
  }
}

/**
 * A tiny markdown renderer: paragraphs, **bold**, `code`, and [[wikilinks]] as Obsidian's
 * `a.internal-link` with `data-href`. Records every call (tests count renders).
 */
export class MarkdownRenderer {
  static readonly calls: { markdown: string; sourcePath: string }[] = [];

  static async render(_app: unknown, markdown: string, el: HTMLElement, sourcePath: string, _component: Component) {
    MarkdownRenderer.calls.push({ markdown, sourcePath });
    const doc = el.ownerDocument;
    for (const block of markdown.split(/\n{2,}/)) {
      if (!block.trim()) continue;
      const heading = /^(#{1,6})\s+(.*)$/.exec(block);
      const p = doc.createElement(heading ? `h${heading[1]?.length ?? 1}` : "p");
      renderInline(heading?.[2] ?? block, p);
      el.appendChild(p);
    }
  }
}

function renderInline(text: string, parent: HTMLElement): void {
  const doc = parent.ownerDocument;
  const pattern = /\[\[([^\]|]+)(?:\|([^\]]+))?\]\]|\*\*([^*]+)\*\*|`([^`]+)`/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parent.appendChild(doc.createTextNode(text.slice(last, match.index)));
    if (match[1] !== undefined) {
      const a = doc.createElement("a");
      a.className = "internal-link";
      a.setAttribute("data-href", match[1]);
      a.setAttribute("href", match[1]);
      a.textContent = match[2] ?? match[1];
      parent.appendChild(a);
    } else {
      const el = doc.createElement(match[3] !== undefined ? "strong" : "code");
      el.textContent = match[3] ?? match[4] ?? "";
      parent.appendChild(el);
    }
    last = (match.index ?? 0) + match[0].length;
  }
  parent.appendChild(doc.createTextNode(text.slice(last)));
}

/** A leaf: enough for a view to be built and opened outside Obsidian. */
export class WorkspaceLeaf {
  view: unknown = null;
  viewState: unknown = null;

  constructor(readonly app: unknown) {}

  async setViewState(state: unknown): Promise<void> {
    this.viewState = state;
  }
}

export class ItemView extends Component {
  readonly app: unknown;
  readonly containerEl: HTMLElement;
  readonly contentEl: HTMLElement;

  constructor(readonly leaf: WorkspaceLeaf) {
    super();
    this.app = leaf.app;
    this.containerEl = obsidianElement();
    this.containerEl.appendChild(obsidianElement()); // the view header
    this.contentEl = obsidianElement();
    this.contentEl.className = "view-content";
    this.containerEl.appendChild(this.contentEl);
  }

  getIcon(): string {
    return "document";
  }

  getState(): Record<string, unknown> {
    return {};
  }

  async setState(_state: unknown, _result: unknown): Promise<void> {}

  async onOpen(): Promise<void> {}

  async onClose(): Promise<void> {}
}

/** The part of Obsidian's `Editor` src/ uses; tests and the browser page bring their own. */
export interface ShimEditor {
  replaceSelection(text: string): void;
  focus?(): void;
}

/** A markdown view: its note and its editor (`file` is null once the view is closed). */
export class MarkdownView extends ItemView {
  file: TFile | null;

  constructor(
    leaf: WorkspaceLeaf,
    readonly editor: ShimEditor,
    file: TFile | null = null,
  ) {
    super(leaf);
    this.file = file;
    leaf.view = this;
  }
}

export class Plugin extends Component {
  readonly commands: FakeCommand[] = [];
  readonly settingTabs: PluginSettingTab[] = [];
  readonly views = new Map<string, (leaf: WorkspaceLeaf) => unknown>();
  readonly ribbonIcons: { icon: string; title: string; callback: () => unknown }[] = [];
  readonly statusBarItems: unknown[] = [];
  readonly events: unknown[] = [];
  readonly hoverLinkSources = new Map<string, { display: string; defaultMod: boolean }>();
  /** What `saveData` wrote last; `loadData` returns it. */
  data: unknown = null;

  constructor(
    readonly app: unknown,
    readonly manifest: unknown,
  ) {
    super();
  }

  registerView(type: string, creator: (leaf: WorkspaceLeaf) => unknown): void {
    this.views.set(type, creator);
  }

  /** `obsidian://ACTION?…` handlers, by action. */
  readonly protocolHandlers = new Map<string, (params: Record<string, string>) => unknown>();

  registerObsidianProtocolHandler(action: string, handler: (params: Record<string, string>) => unknown): void {
    this.protocolHandlers.set(action, handler);
  }

  registerHoverLinkSource(id: string, info: { display: string; defaultMod: boolean }): void {
    this.hoverLinkSources.set(id, info);
  }

  addRibbonIcon(icon: string, title: string, callback: () => unknown): unknown {
    this.ribbonIcons.push({ icon, title, callback });
    return someElement();
  }

  addStatusBarItem(): unknown {
    const el = someElement();
    this.statusBarItems.push(el);
    return el;
  }

  override registerEvent(ref: unknown): void {
    this.events.push(ref);
    super.registerEvent(ref);
  }

  addCommand(command: FakeCommand): FakeCommand {
    this.commands.push(command);
    return command;
  }

  addSettingTab(tab: PluginSettingTab): void {
    this.settingTabs.push(tab);
  }

  async loadData(): Promise<unknown> {
    return this.data;
  }

  async saveData(data: unknown): Promise<void> {
    this.data = structuredClone(data);
  }
}

export class PluginSettingTab {
  readonly containerEl = new FakeElement();

  constructor(
    readonly app: unknown,
    readonly plugin: Plugin,
  ) {}
}

/** Obsidian's `normalizePath`: forward slashes, no doubled, leading or trailing slash, NFC. */
export function normalizePath(path: string): string {
  const cleaned = path
    .replace(/[\\/]+/g, "/")
    .replace(/^\/+|\/+$/g, "")
    .replace(/\u00a0|\u202f/g, " ")
    .normalize("NFC");
  return cleaned === "" ? "/" : cleaned;
}

/** Obsidian's file classes: tests build notes as `TFile`s so `instanceof` narrows as in the app. */
export class TAbstractFile {
  name = "";
  constructor(public path: string) {
    this.name = path.slice(path.lastIndexOf("/") + 1);
  }
}

export class TFile extends TAbstractFile {
  basename: string;
  extension: string;
  stat = { ctime: 0, mtime: 0, size: 0 };
  constructor(path: string, stat?: { mtime: number; size: number }) {
    super(path);
    const dot = this.name.lastIndexOf(".");
    this.basename = dot > 0 ? this.name.slice(0, dot) : this.name;
    this.extension = dot > 0 ? this.name.slice(dot + 1) : "";
    if (stat) this.stat = { ctime: stat.mtime, ...stat };
  }
}

export class TFolder extends TAbstractFile {}

interface RequestParam {
  url: string;
  method?: string;
  contentType?: string;
  body?: string | ArrayBuffer;
  headers?: Record<string, string>;
  throw?: boolean;
}

/** Obsidian's `requestUrl` over `fetch` (the app's goes through Electron, without CORS). */
export async function requestUrl(request: RequestParam | string) {
  const r = typeof request === "string" ? { url: request } : request;
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  if (r.contentType) headers["Content-Type"] = r.contentType;
  const response = await fetch(r.url, { method: r.method ?? "GET", headers, body: r.body });
  const buffer = await response.arrayBuffer();
  const text = new TextDecoder().decode(buffer);
  if (r.throw !== false && response.status >= 400) throw new Error(`Request failed, status ${response.status}`);
  return {
    status: response.status,
    headers: Object.fromEntries([...(response.headers as unknown as Iterable<[string, string]>)]),
    arrayBuffer: buffer,
    text,
    get json(): unknown {
      return JSON.parse(text) as unknown;
    },
  };
}

/** The desktop vault adapter: the vault's folder on disk. */
export class FileSystemAdapter {
  constructor(private readonly basePath: string) {}

  getBasePath(): string {
    return this.basePath;
  }
}

/** The app version `requireApiVersion` compares with (tests may lower it). */
export const apiVersion = { current: "1.13.1" };

/** Obsidian's `requireApiVersion`: whether the running app is at least `version`. */
export function requireApiVersion(version: string): boolean {
  const a = apiVersion.current.split(".").map(Number);
  const b = version.split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

/**
 * Obsidian's `Keymap.isModEvent`: what kind of new leaf a click asks for. Mod is Ctrl or Cmd
 * (either here; the app picks one per platform): Mod → "tab", Mod+Alt → "split",
 * Mod+Alt+Shift → "window"; a middle click → "tab"; otherwise false.
 */
export class Keymap {
  static isModEvent(event?: MouseEvent | KeyboardEvent | null): "tab" | "split" | "window" | boolean {
    if (!event) return false;
    const mod = event.ctrlKey || event.metaKey;
    if (mod && event.altKey && event.shiftKey) return "window";
    if (mod && event.altKey) return "split";
    if (mod) return "tab";
    if ("button" in event && event.button === 1) return "tab";
    return false;
  }
}

/** Obsidian's `Platform`: this stand-in is a desktop app (tests of the mobile plugin set
 * `isMobile`, and the browser test's phone page does too). */
export const Platform = { isDesktopApp: true, isDesktop: true, isMobile: false, isMobileApp: false, isIosApp: false, isAndroidApp: false };

/** Obsidian's `Modal`: opening appends it to the document (where there is one). */
export class Modal {
  readonly containerEl: HTMLElement;
  readonly modalEl: HTMLElement;
  readonly titleEl: HTMLElement;
  readonly contentEl: HTMLElement;
  isOpen = false;

  constructor(readonly app: unknown) {
    this.containerEl = obsidianElement(document, "div");
    this.containerEl.className = "modal-container";
    this.modalEl = obsidianElement(document, "div");
    this.modalEl.className = "modal";
    this.titleEl = obsidianElement(document, "div");
    this.titleEl.className = "modal-title";
    this.contentEl = obsidianElement(document, "div");
    this.contentEl.className = "modal-content";
    this.modalEl.append(this.titleEl, this.contentEl);
    this.containerEl.appendChild(this.modalEl);
  }

  open(): void {
    this.isOpen = true;
    document.body.appendChild(this.containerEl);
    this.onOpen();
  }

  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.onClose();
    this.containerEl.remove();
  }

  onOpen(): void {}

  onClose(): void {}
}

/** Glyphs standing in for the Lucide icons `setIcon` draws in Obsidian (the browser harness
 * shows them in its screenshots). */
const ICON_GLYPHS: Record<string, string> = {
  copy: "❐", // a glyph the harness fonts (DejaVu, Noto) have: ⧉ drew as an empty box
  "text-cursor-input": "⤵",
  "refresh-cw": "↻",
  pencil: "✎",
  "thumbs-up": "👍",
  "thumbs-down": "👎",
  "file-plus": "＋",
  library: "▤",
  "clipboard-copy": "❐",
};

/** Obsidian's `setIcon`: here the icon's name in `data-icon` and a glyph as the text. */
export function setIcon(el: HTMLElement, name: string): void {
  el.setAttribute("data-icon", name);
  el.textContent = ICON_GLYPHS[name] ?? "•";
}
