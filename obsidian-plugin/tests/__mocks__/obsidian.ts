/**
 * A small runtime stand-in for the `obsidian` module in tests (vitest.config.mts aliases it):
 * the npm package holds type definitions only. It implements just what src/ uses, records
 * what the plugin registers, and lets tests drive text inputs. Type checking still uses the
 * real definitions in node_modules/obsidian.
 */
import { resolveSubpathLike } from "../../src/resolver/subpath";

/** Obsidian's `resolveSubpath`, with the same semantics as the resolver's own. */
export const resolveSubpath = resolveSubpathLike;

/** The few HTMLElement helpers Obsidian adds that src/ calls. */
export class FakeElement {
  readonly classes = new Set<string>();
  children: FakeElement[] = [];
  type = "text";

  empty(): void {
    this.children = [];
  }

  toggleClass(name: string, on: boolean): void {
    if (on) this.classes.add(name);
    else this.classes.delete(name);
  }
}

export class Notice {
  static readonly shown: string[] = [];

  constructor(readonly message: string) {
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

  addText(build: (text: TextComponent) => unknown): this {
    const text = new TextComponent();
    this.texts.push(text);
    build(text);
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
}

export class Plugin {
  readonly commands: FakeCommand[] = [];
  readonly settingTabs: PluginSettingTab[] = [];
  /** What `saveData` wrote last; `loadData` returns it. */
  data: unknown = null;

  constructor(
    readonly app: unknown,
    readonly manifest: unknown,
  ) {}

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
